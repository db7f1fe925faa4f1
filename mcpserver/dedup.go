package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/llmguard/llmguard/resilience"
)

// dedup makes identical tool calls share one upstream call (single-flight)
// and, for CacheTTL after a success, its stored result, so an agent that
// retries a call does not pay twice.
//
// It is done here rather than through the engine's Call.IdempotencyKey
// because the engine runs a shared flight detached from its callers'
// cancellation, while an MCP call that is cancelled (notifications/cancelled
// or a disconnect) must abort its upstream request at once. Here a flight is
// cancelled as soon as its last waiting caller has gone.
type dedup struct {
	now        func() time.Time
	log        *slog.Logger
	ttl        time.Duration
	maxEntries int

	mu      sync.Mutex
	flights map[string]*flight
	cache   map[string]cached
}

type cached struct {
	res     *resilience.Result
	expires time.Time
}

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
	return &dedup{now: now, log: log, ttl: ttl, maxEntries: maxEntries,
		flights: map[string]*flight{}, cache: map[string]cached{}}
}

// do returns the stored result for key, joins the flight running for key,
// or starts one running fn. The flight's context keeps ctx's values and
// deadline but not its cancellation: it is cancelled when every caller
// waiting on it has gone. A success is stored for ttl (0 = the dedup's
// default, < 0 = not stored). p (may be nil) receives the flight's events while
// its caller waits.
func (d *dedup) do(ctx context.Context, key string, ttl time.Duration, p *progress, fn func(ctx context.Context, onEvent func(resilience.Event)) (*resilience.Result, error)) (*resilience.Result, error) {
	d.mu.Lock()
	if c, ok := d.cache[key]; ok {
		if d.now().Before(c.expires) {
			d.mu.Unlock()
			r := *c.res
			r.Cached = true
			return &r, nil
		}
		delete(d.cache, key)
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
		d.store(key, res, f.ttl)
	}
	f.res, f.err = res, err
	d.mu.Unlock()
	close(f.done)
}

// store keeps res for ttl; d.mu is held. Expired entries go first, then
// the oldest when the cache is full.
func (d *dedup) store(key string, res *resilience.Result, ttl time.Duration) {
	now := d.now()
	if len(d.cache) >= d.maxEntries {
		var oldest string
		var oldestAt time.Time
		for k, c := range d.cache {
			if !now.Before(c.expires) {
				delete(d.cache, k)
				continue
			}
			if oldest == "" || c.expires.Before(oldestAt) {
				oldest, oldestAt = k, c.expires
			}
		}
		if len(d.cache) >= d.maxEntries {
			delete(d.cache, oldest)
		}
	}
	d.cache[key] = cached{res: res, expires: now.Add(ttl)}
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
