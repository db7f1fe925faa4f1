package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/llmguard/llmguard/resilience"
	"github.com/maypok86/otter/v2"
)

// dedup makes identical tool calls share one upstream call (single-flight)
// and, for CacheTTL after a success, its stored result, so an agent that
// retries a call does not pay twice. The results live in an otter cache
// bounded by CacheEntries (otter chooses what to evict when it is full),
// each expiring after its TTL on the server's clock.
//
// It is done here rather than through the engine's Call.IdempotencyKey
// because the engine runs a shared flight detached from its callers'
// cancellation, while an MCP call that is cancelled (notifications/cancelled
// or a disconnect) must abort its upstream request at once. Here a flight is
// cancelled as soon as its last waiting caller has gone.
type dedup struct {
	now   func() time.Time
	log   *slog.Logger
	ttl   time.Duration
	cache *otter.Cache[string, cached]

	mu      sync.Mutex
	flights map[string]*flight
}

type cached struct {
	res *resilience.Result
	ttl time.Duration
}

// otterClock is the server's clock as otter reads it; it never ticks (no
// goroutine for proactive expiry: an expired entry is gone when read, and
// otter's maintenance removes it on the next writes).
type otterClock struct{ now func() time.Time }

func (c otterClock) NowNano() int64                      { return c.now().UnixNano() }
func (c otterClock) Tick(time.Duration) <-chan time.Time { return nil }

// flight is one upstream call shared by every identical caller.
type flight struct {
	done    chan struct{}
	res     *resilience.Result
	err     error
	waiters int
	cancel  context.CancelFunc
	ttl     time.Duration
	sinks   map[*progress]struct{} // progress of the callers still waiting
}

func newDedup(now func() time.Time, log *slog.Logger, ttl time.Duration, maxEntries int) *dedup {
	return &dedup{now: now, log: log, ttl: ttl, flights: map[string]*flight{},
		cache: otter.Must(&otter.Options[string, cached]{
			MaximumSize:      maxEntries,
			ExpiryCalculator: otter.ExpiryWritingFunc(func(e otter.Entry[string, cached]) time.Duration { return e.Value.ttl }),
			Clock:            otterClock{now},
		})}
}

// do returns the stored result for key, joins the flight running for key,
// or starts one running fn. The flight's context keeps ctx's values and
// deadline but not its cancellation: it is cancelled when every caller
// waiting on it has gone. A success is stored for ttl (0 = the dedup's
// default, < 0 = not stored). p (may be nil) receives the flight's events while
// its caller waits.
func (d *dedup) do(ctx context.Context, key string, ttl time.Duration, p *progress, fn func(ctx context.Context, onEvent func(resilience.Event)) (*resilience.Result, error)) (*resilience.Result, error) {
	d.mu.Lock()
	if c, ok := d.cache.GetIfPresent(key); ok {
		d.mu.Unlock()
		r := *c.res
		r.Cached = true
		return &r, nil
	}
	f, ok := d.flights[key]
	if !ok {
		fctx := context.WithoutCancel(ctx)
		var cancel context.CancelFunc
		if dl, ok := ctx.Deadline(); ok {
			fctx, cancel = context.WithDeadline(fctx, dl)
		} else {
			fctx, cancel = context.WithCancel(fctx)
		}
		if ttl == 0 {
			ttl = d.ttl
		}
		f = &flight{done: make(chan struct{}), cancel: cancel, ttl: ttl, sinks: map[*progress]struct{}{}}
		d.flights[key] = f
		go d.run(fctx, key, f, fn)
	}
	f.waiters++
	if p != nil {
		f.sinks[p] = struct{}{}
	}
	d.mu.Unlock()

	select {
	case <-f.done:
		d.mu.Lock()
		delete(f.sinks, p)
		d.mu.Unlock()
		return f.res, f.err
	case <-ctx.Done():
		d.mu.Lock()
		delete(f.sinks, p)
		f.waiters--
		if f.waiters == 0 {
			// Nobody wants the answer any more: abort the upstream call now,
			// and let a later identical call start afresh.
			f.cancel()
			if d.flights[key] == f {
				delete(d.flights, key)
			}
		}
		d.mu.Unlock()
		return nil, ctx.Err()
	}
}

func (d *dedup) run(ctx context.Context, key string, f *flight, fn func(context.Context, func(resilience.Event)) (*resilience.Result, error)) {
	defer f.cancel()
	onEvent := func(ev resilience.Event) {
		d.mu.Lock()
		defer d.mu.Unlock()
		for p := range f.sinks {
			p.event(ev)
		}
	}
	res, err := d.call(ctx, fn, onEvent)
	d.mu.Lock()
	if d.flights[key] == f {
		delete(d.flights, key)
	}
	if err == nil && res != nil && !res.Static && f.ttl > 0 {
		d.cache.Set(key, cached{res: res, ttl: f.ttl})
	}
	f.res, f.err = res, err
	d.mu.Unlock()
	close(f.done)
}

// call runs fn, turning a panic into an error line (the flight runs on its
// own goroutine, out of reach of the tool handler's recover).
func (d *dedup) call(ctx context.Context, fn func(context.Context, func(resilience.Event)) (*resilience.Result, error), onEvent func(resilience.Event)) (res *resilience.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			if d.log != nil {
				d.log.Error("mcp upstream call panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			}
			res, err = nil, panicError("the upstream call", p)
		}
	}()
	return fn(ctx, onEvent)
}
