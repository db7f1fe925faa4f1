package overhead

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// This file: the warm-up's gate — the upstream holds a path's first
// requests until as many are in as the load has clients, so the path has
// opened as many connections as the load can ever use at once before
// anything is measured.

// gateLimit is how long the gate holds requests at most: a path that
// cannot have that many requests out at once (one that queues them) goes
// on after it.
const gateLimit = 5 * time.Second

// gate holds the upstream's requests while it is armed.
type gate struct {
	mu   sync.Mutex
	want int             // requests still to come before the gate opens
	open context.Context // done when they have come, or at gateLimit
	stop context.CancelFunc
}

// hold is h behind the gate.
func (g *gate) hold(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if open := g.enter(); open != nil {
			select {
			case <-open.Done():
			case <-r.Context().Done():
			}
		}
		h.ServeHTTP(w, r)
	})
}

// enter counts a request in; it returns what to wait for, or nil when the
// gate is not armed.
func (g *gate) enter() context.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.want == 0 {
		return nil
	}
	g.want--
	if g.want == 0 {
		g.stop()
	}
	return g.open
}

// arm holds the next n requests until all n have come (or gateLimit); the
// func returned opens the gate whatever came.
func (g *gate) arm(n int) func() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.want = n
	g.open, g.stop = context.WithTimeout(context.Background(), gateLimit)
	stop := g.stop
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.want = 0
		stop()
	}
}

// fill sends one request from each of conns clients on p at once, the
// upstream holding them until all have come: p ends with conns connections
// to the upstream in its pool (the gateway's and the proxy's pools hold at
// least that many). Errors are the measured phases' to report.
func fill(ctx context.Context, st *stack, w *workload, p path, conns int) {
	open := st.gate.arm(conns)
	defer open()
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() { _, _ = w.call(ctx, st, p) })
	}
	wg.Wait()
}
