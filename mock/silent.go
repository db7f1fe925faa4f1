package mock

import (
	"time"
)

// silentDefault is how long a "silent" fault holds a request before it
// hangs up: the idle timeout at which proxies and load balancers drop a
// request that has not started answering.
const silentDefault = 15 * time.Second

// silent keeps the request open without a status line or headers for n
// seconds (the step's argument, default 15), then drops the connection, as
// a proxy in front of a silent upstream does. A client that gives up first,
// or Server.Close, ends it sooner.
func (x *reply) silent(st Step) {
	d := silentDefault
	if st.HasArg {
		d = time.Duration(st.Arg) * time.Second
	}
	x.holdFor(d)
}
