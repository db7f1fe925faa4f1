package mcpcall

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/llmguard/llmguard/internal/defaults"
)

// DefaultTTL is how long a Group keeps a success when GroupOptions.TTL is zero.
const DefaultTTL = 10 * time.Minute

// GroupOptions configures a Group. A nil *GroupOptions, and every zero
// field, means the documented default.
type GroupOptions[V any] struct {
	// Store keeps the results (nil = NewCache of DefaultCacheEntries).
	Store Store[V]
	// TTL is how long a success is kept when a call gives none
	// (0 = DefaultTTL, < 0 = never).
	TTL time.Duration
	// Keep reports whether a success may be stored (nil = every success).
	Keep func(V) bool
	// Logger receives a panicking call's stack and the Store's errors
	// (nil = slog.Default()).
	Logger *slog.Logger
}

// CallOptions are one Do call's settings; nil means the zero value.
type CallOptions struct {
	// TTL is how long this call's success is kept (0 = the Group's TTL,
	// < 0 = not stored).
	TTL time.Duration
	// RunFor, when > 0, is the flight's own deadline: it outlives callers
	// whose deadline passes (a later identical call joins it and gets its
	// result) and is aborted only when its last caller cancels. Zero: the
	// flight has the first caller's deadline and is aborted as soon as no
	// caller waits for it.
	RunFor time.Duration
}

// Group makes identical calls (same key) share one flight: while a flight
// runs, a call with its key waits for it and gets its result; a success
// is kept in the Store for its TTL, and a call with its key returns it
// without running again. The flight's context keeps the first caller's
// values but not its cancellation. Events the flight emits reach every
// caller still waiting. Create one with NewGroup; safe for concurrent use.
type Group[V, E any] struct {
	store Store[V]
	ttl   time.Duration
	keep  func(V) bool
	log   *slog.Logger

	mu      sync.Mutex
	flights map[string]*flight[V, E]
}

// flight is one run shared by every identical caller.
type flight[V, E any] struct {
	done      chan struct{}
	v         V
	cached    bool
	err       error
	waiters   int
	cancel    context.CancelFunc
	ttl       time.Duration
	runFor    time.Duration
	cancelled bool                  // aborted by its last caller; winding down
	sinks     map[*sink[E]]struct{} // event sinks of the callers still waiting
}

type sink[E any] struct{ fn func(E) }

// PanicError is a flight's panic, recovered on its goroutine (out of reach
// of the caller's recover); its stack went to the Group's Logger.
type PanicError struct{ Value any }

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// NewGroup returns a Group; o may be nil.
func NewGroup[V, E any](o *GroupOptions[V]) *Group[V, E] {
	opts := defaults.Copy(o)
	if opts.Store == nil {
		opts.Store = NewCache[V](0)
	}
	if opts.TTL == 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Group[V, E]{store: opts.Store, ttl: opts.TTL, keep: opts.Keep, log: opts.Logger, flights: map[string]*flight[V, E]{}}
}

// Do returns the result stored for key (cached true), joins the flight
// running for key, or starts one running fn. onEvent (may be nil) receives
// the flight's events while this caller waits; it must not block. A caller
// whose ctx ends returns ctx.Err() at once; the flight goes on or is
// aborted as CallOptions.RunFor says. A panic in fn is a *PanicError.
func (g *Group[V, E]) Do(ctx context.Context, key string, o *CallOptions, onEvent func(E), fn func(ctx context.Context, emit func(E)) (V, error)) (v V, cached bool, err error) {
	opts := defaults.Copy(o)
	for {
		if v, ok := g.stored(ctx, key); ok {
			return v, true, nil
		}
		g.mu.Lock()
		f, ok := g.flights[key]
		if ok && f.cancelled {
			// Aborted by its callers: wait until it is gone, then look again.
			g.mu.Unlock()
			select {
			case <-f.done:
				continue
			case <-ctx.Done():
				var zero V
				return zero, false, ctx.Err()
			}
		}
		if !ok {
			f = g.start(ctx, key, opts, fn)
		}
		f.waiters++
		var s *sink[E]
		if onEvent != nil {
			s = &sink[E]{onEvent}
			f.sinks[s] = struct{}{}
		}
		g.mu.Unlock()
		return g.wait(ctx, key, f, s)
	}
}

// start registers and starts a flight for key; g.mu is held.
func (g *Group[V, E]) start(ctx context.Context, key string, o CallOptions, fn func(context.Context, func(E)) (V, error)) *flight[V, E] {
	fctx := context.WithoutCancel(ctx)
	var cancel context.CancelFunc
	if o.RunFor > 0 {
		fctx, cancel = context.WithTimeout(fctx, o.RunFor)
	} else if dl, ok := ctx.Deadline(); ok {
		fctx, cancel = context.WithDeadline(fctx, dl)
	} else {
		fctx, cancel = context.WithCancel(fctx)
	}
	ttl := o.TTL
	if ttl == 0 {
		ttl = g.ttl
	}
	f := &flight[V, E]{done: make(chan struct{}), cancel: cancel, ttl: ttl, runFor: o.RunFor, sinks: map[*sink[E]]struct{}{}}
	g.flights[key] = f
	go g.run(fctx, key, f, fn)
	return f
}

func (g *Group[V, E]) wait(ctx context.Context, key string, f *flight[V, E], s *sink[E]) (V, bool, error) {
	select {
	case <-f.done:
		g.mu.Lock()
		delete(f.sinks, s)
		g.mu.Unlock()
		return f.v, f.cached, f.err
	case <-ctx.Done():
		g.mu.Lock()
		delete(f.sinks, s)
		f.waiters--
		if f.waiters == 0 {
			switch {
			case f.runFor == 0:
				// Nobody wants the answer any more: abort the flight now, and
				// let a later identical call start afresh.
				f.cancel()
				if g.flights[key] == f {
					delete(g.flights, key)
				}
			case !errors.Is(ctx.Err(), context.DeadlineExceeded):
				// Cancelled by its last caller: abort it, and let a later
				// identical call see how it ended.
				f.cancelled = true
				f.cancel()
			}
		}
		g.mu.Unlock()
		var zero V
		return zero, false, ctx.Err()
	}
}

func (g *Group[V, E]) run(ctx context.Context, key string, f *flight[V, E], fn func(context.Context, func(E)) (V, error)) {
	defer f.cancel()
	v, cached := g.stored(ctx, key) // stored after this caller looked
	var err error
	claimed := false
	if c, ok := g.store.(Claims[V]); ok && !cached {
		v, cached, claimed, err = g.await(ctx, c, key)
	}
	if !cached && err == nil {
		v, err = g.call(ctx, fn, func(e E) {
			g.mu.Lock()
			defer g.mu.Unlock()
			for s := range f.sinks {
				s.fn(e)
			}
		})
		g.keepResult(ctx, key, f, v, err, claimed)
	}
	g.mu.Lock()
	if g.flights[key] == f {
		delete(g.flights, key)
	}
	f.v, f.cached, f.err = v, cached, err
	g.mu.Unlock()
	close(f.done)
}

// keepResult stores a success the Group keeps (publishing it, when the
// flight holds key's claim) or releases the claim.
func (g *Group[V, E]) keepResult(ctx context.Context, key string, f *flight[V, E], v V, err error, claimed bool) {
	sctx := context.WithoutCancel(ctx)
	if err == nil && f.ttl > 0 && (g.keep == nil || g.keep(v)) {
		serr := g.store.Set(sctx, key, v, f.ttl)
		if serr == nil {
			return
		}
		g.log.Warn("mcp call result not stored", "error", serr)
	}
	if claimed {
		if rerr := g.store.(Claims[V]).Release(sctx, key); rerr != nil {
			g.log.Warn("mcp call claim not released", "error", rerr)
		}
	}
}

func (g *Group[V, E]) stored(ctx context.Context, key string) (V, bool) {
	v, ok, err := g.store.Get(ctx, key)
	if err != nil {
		g.log.Warn("mcp call result store unreadable", "error", err)
		return v, false
	}
	return v, ok
}

// call runs fn, turning a panic into a *PanicError.
func (g *Group[V, E]) call(ctx context.Context, fn func(context.Context, func(E)) (V, error), emit func(E)) (v V, err error) {
	defer func() {
		if p := recover(); p != nil {
			g.log.Error("mcp call panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			var zero V
			v, err = zero, &PanicError{Value: p}
		}
	}()
	return fn(ctx, emit)
}
