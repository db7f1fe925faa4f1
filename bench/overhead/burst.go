package overhead

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// This file: the resident set after a burst of long requests (issue 19
// item 4: the gateway held 35-46 MiB for minutes after one): what the
// proxy's and the gateway's processes hold idle, at the end of a burst of
// 512 KB requests and 10 s after it.

// The memory group's burst: burstClients clients each send burstEach
// requests of 512 KB (OpenAI to OpenAI) to one path; then the run waits
// (ScaleConfig.Settle) and reads the path's resident set again.
const (
	burstClients = 16
	burstEach    = 8
)

// Resident is one path's resident set around the burst, in bytes (0 where
// the system cannot tell).
type Resident struct {
	// Idle is after one request and a collection that returned the free
	// memory to the system, before the burst.
	Idle uint64
	// End is as the burst's last answer arrived; Later a while after
	// (Burst.Settle).
	End, Later uint64
}

// Burst is the scaling run's burst, on the proxy and on the gateway.
type Burst struct {
	// Requests each path was sent, of BodyBytes each.
	Requests, BodyBytes int
	// Settle is how long after its end the burst's Later was read.
	Settle         time.Duration
	Proxy, Gateway Resident
}

// burst runs the burst on the proxy, then on the gateway, each read again
// settle after its end.
func burst(ctx context.Context, st *stack, settle time.Duration) (*Burst, error) {
	body := func(model string) []byte { return conversation("openai", model, 512<<10) }
	api := "/v1/chat/completions"
	w := &workload{urlPath: forPaths(api, api), body: forPaths(body("gpt-4o"), body("default"))}
	out := &Burst{Requests: burstClients * burstEach, BodyBytes: len(w.body[guard]), Settle: settle}
	var errs []error
	for _, p := range []path{proxy, guard} {
		r, err := burstOn(ctx, st, w, p, settle)
		if p == proxy {
			out.Proxy = r
		} else {
			out.Gateway = r
		}
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// burstOn is the burst on p.
func burstOn(ctx context.Context, st *stack, w *workload, p path, settle time.Duration) (Resident, error) {
	var r Resident
	if _, err := w.call(ctx, st, p); err != nil {
		return r, fmt.Errorf("burst, %s: %w", pathNames[p], err)
	}
	idle, err := st.counters(p, true)
	if err != nil {
		return r, err
	}
	var fails failures
	var wg sync.WaitGroup
	for range burstClients {
		wg.Go(func() {
			for range burstEach {
				if _, err := w.call(ctx, st, p); err != nil {
					fails.record(err)
				}
			}
		})
	}
	wg.Wait()
	if n := fails.n.Load(); n > 0 {
		return r, fmt.Errorf("burst, %s: %d of %d %w (first: %v)", pathNames[p], n, burstClients*burstEach, errLoad, fails.first)
	}
	end, err := st.counters(p, false)
	if err != nil {
		return r, err
	}
	select {
	case <-ctx.Done():
		return r, ctx.Err()
	case <-time.After(settle):
	}
	later, err := st.counters(p, false)
	return Resident{Idle: idle.rss, End: end.rss, Later: later.rss}, err
}

// burstSlack is how far above its idle resident set the gateway's may be
// once the burst has settled, for the target's verdict: what one request's
// work leaves mapped (its goroutines' stacks, the code it ran).
const burstSlack = 4 << 20

// markdown is the burst's table ("" without a burst).
func (u *Burst) markdown() string {
	if u == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**Memory after a burst** (%d clients send %d requests each of %s, OpenAI to OpenAI, to one path, then nothing "+
		"for %s; the resident set of the path's process: idle after one request and a collection, at the burst's end, and %s after it)\n\n",
		burstClients, burstEach, size(float64(u.BodyBytes)), u.Settle, u.Settle)
	var t table
	t.head("path", "idle", "at the burst's end", u.Settle.String()+" later")
	for _, p := range []path{proxy, guard} {
		r := u.Proxy
		if p == guard {
			r = u.Gateway
		}
		t.row(pathNames[p], size(float64(r.Idle)), size(float64(r.End)), size(float64(r.Later)))
	}
	b.WriteString(t.String())
	return b.String()
}
