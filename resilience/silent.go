package resilience

import (
	"context"
	"fmt"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/provider"
)

// A silent target that hangs up: a streaming request gets its response
// headers at once from a healthy upstream, so one that sends none for
// longer than the route's silent_after and then closes the connection (as
// proxies and load balancers in front of a stuck upstream do, often at
// 15 s) has timed out, however the close reads (an EOF, a reset). The
// attempt is a timeout verdict: the call falls back at once and does not
// retry the target. A close sooner than silent_after stays the transport
// failure it is.

// silence watches a streaming attempt for its first response byte.
type silence struct {
	start time.Time
	heard atomic.Bool
	trace httptrace.ClientTrace // allocated with the watch
}

// watch starts the watch at once and returns ctx with a client trace that
// notes the first response byte (any adapter on net/http reports it).
func (s *silence) watch(ctx context.Context) context.Context {
	s.start = time.Now()
	s.trace.GotFirstResponseByte = s.hear
	return httptrace.WithClientTrace(ctx, &s.trace)
}

// watchSilence is a new silence's watch of ctx.
func watchSilence(ctx context.Context) (context.Context, *silence) {
	s := &silence{}
	return s.watch(ctx), s
}

func (s *silence) hear() { s.heard.Store(true) }

// hungUp returns the timeout verdict of an attempt that failed with err
// before its response headers after more than silentAfter of silence, or
// nil when err is something else: a response (a status), a close sooner
// than silentAfter, or the attempt's context ending (its own timers, the
// caller).
func (s *silence) hungUp(actx context.Context, t *targetPlan, err error, silentAfter time.Duration) *provider.Error {
	pe := provider.AsError(err)
	silent := time.Since(s.start)
	if pe == nil || pe.Verdict.Status != 0 || s.heard.Load() || actx.Err() != nil || silent <= silentAfter {
		return nil
	}
	te := timeoutError(t, fmt.Sprintf("no response headers for %s, then the connection closed", silent.Round(time.Millisecond)), false)
	te.Err = err
	return te
}
