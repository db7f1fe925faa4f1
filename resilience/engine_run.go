package resilience

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
)

// Engine runs calls over routes. Create it with New; it is safe for
// concurrent use. The zero value is not usable.
type Engine struct {
	adapters     map[string]provider.Adapter
	cat          *catalog.Catalog // never nil
	randMu       sync.Mutex
	rnd          *rand.Rand
	onEvent      func(Event)
	log          *slog.Logger
	store        state.Store
	routes       map[string]*routePlan
	defaultRoute Route // the policies of calls that name a target

	// limits is each configured target's concurrency limit (see runtime),
	// fixed by New; read-only after it.
	limits map[string]int

	mu        sync.Mutex
	runtimes  map[string]*targetRuntime
	dynamic   map[string]*memoPlan
	lastSweep time.Time // of invented targets' state (see sweepLocked)

	sf      singleflight.Group
	cache   *resultCache
	repeats repeatTable // held failures (see repeat.go)
}

// targetRuntime is the in-process state of one target shared by every route
// that uses it: concurrency limit, retry budget counters and statistics.
type targetRuntime struct {
	name string
	sem  *semaphore.Weighted // nil = unlimited

	active   atomic.Int64 // calls currently on this target
	retrying atomic.Int64 // retries currently in flight

	successes, failures, retries, fallbacks atomic.Int64

	// wholeUntil (Unix ns): until then Chats to this target ask for the
	// answer whole, as a stream broke during an answer (see chatAttempt).
	wholeUntil atomic.Int64

	// used is when a call was last planned on the target (Unix ns): an
	// invented target idle for inventedTTL is dropped.
	used atomic.Int64

	mu         sync.Mutex
	lastErr    string
	lastFailed time.Time
}

// New builds an Engine from opts (nil: no routes and no adapters, so that
// every call fails). It fails when a route target is not "provider/model"
// or names a provider without an adapter.
func New(opts *Options) (*Engine, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	e := &Engine{
		adapters:     o.Adapters,
		cat:          o.Catalog,
		rnd:          o.Rand,
		onEvent:      o.OnEvent,
		log:          o.Logger,
		store:        o.Store,
		routes:       make(map[string]*routePlan, len(o.Routes)),
		runtimes:     make(map[string]*targetRuntime),
		dynamic:      make(map[string]*memoPlan),
		defaultRoute: o.Routes["default"],
	}
	if e.cat == nil {
		e.cat = &catalog.Catalog{}
	}
	if e.rnd == nil {
		e.rnd = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	if e.store == nil {
		e.store = memstore.New()
	}
	names := make([]string, 0, len(o.Routes))
	for name := range o.Routes {
		names = append(names, name)
	}
	sort.Strings(names)
	e.limits = targetLimits(o.Routes, names, e.log)
	var maxEntries, maxBytes int64
	for _, name := range names {
		r := o.Routes[name]
		rp, err := e.newRoutePlan(name, &r, nil)
		if err != nil {
			return nil, fmt.Errorf("resilience: %w", err)
		}
		e.routes[name] = rp
		maxEntries = max(maxEntries, rp.cacheMaxEntries)
		maxBytes = max(maxBytes, rp.cacheMaxByte)
	}
	if maxEntries == 0 {
		maxEntries, maxBytes = defaultCacheMaxEntries, defaultCacheMaxBytes
	}
	e.cache = newResultCache(maxEntries, maxBytes)
	return e, nil
}

// runtime returns the shared runtime of a target, creating it on first use.
// The concurrency limit is per target, not per route: one semaphore per
// provider/model, shared by every route that lists it. For a target some
// configured route lists, the limit is the one New fixed (see targetLimits)
// and maxc is ignored; for a target only a call names (its Fallbacks, or a
// "provider/model" route) it is maxc (0 = unlimited), the limit of the
// route the first such call runs under, fixed then.
// A configured target's runtime is kept for the engine's life. Beyond
// maxRuntimes targets (clients may name arbitrary models), the runtimes of
// invented targets idle for inventedTTL are dropped, and a new target that
// still finds no room gets a runtime of its own, not shared or listed by
// Status.
func (e *Engine) runtime(name string, maxc int) *targetRuntime {
	l, configured := e.limits[name]
	if configured {
		maxc = l
	}
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	rt, ok := e.runtimes[name]
	if !ok {
		rt = &targetRuntime{name: name}
		rt.used.Store(now.UnixNano())
		if maxc > 0 {
			rt.sem = semaphore.NewWeighted(int64(maxc))
		}
		if !configured && len(e.runtimes) >= maxRuntimes {
			e.sweepLocked(now)
		}
		if configured || len(e.runtimes) < maxRuntimes {
			e.runtimes[name] = rt
		}
	}
	return rt
}

// sweepLocked drops the state of invented targets idle for inventedTTL:
// memoised plans and runtimes of targets no configured route lists and no
// call is on. It runs at most once a minute (a flood of new names does not
// rescan per name). The caller holds e.mu.
func (e *Engine) sweepLocked(now time.Time) {
	if now.Sub(e.lastSweep) < time.Minute {
		return
	}
	e.lastSweep = now
	old := now.Add(-inventedTTL).UnixNano()
	for k, m := range e.dynamic {
		if m.used.Load() < old {
			delete(e.dynamic, k)
		}
	}
	for name, rt := range e.runtimes {
		if _, configured := e.limits[name]; !configured && rt.active.Load() == 0 && rt.used.Load() < old {
			delete(e.runtimes, name)
		}
	}
}

// Routes returns each configured route's targets in effective order
// (after cost ordering).
func (e *Engine) Routes() map[string][]string {
	m := make(map[string][]string, len(e.routes))
	for name, rp := range e.routes {
		m[name] = append([]string(nil), rp.targetNames...)
	}
	return m
}

// Status returns a snapshot of every target the engine knows, sorted by name.
// A target whose provider key is open reports the key's breaker.
func (e *Engine) Status() []TargetStatus {
	e.mu.Lock()
	rts := make([]*targetRuntime, 0, len(e.runtimes))
	for _, rt := range e.runtimes {
		rts = append(rts, rt)
	}
	e.mu.Unlock()
	sort.Slice(rts, func(i, j int) bool { return rts[i].name < rts[j].name })
	ctx := context.Background()
	out := make([]TargetStatus, 0, len(rts))
	for _, rt := range rts {
		ts := TargetStatus{
			Target:    rt.name,
			Breaker:   state.Closed,
			Successes: rt.successes.Load(),
			Failures:  rt.failures.Load(),
			Retries:   rt.retries.Load(),
			Fallbacks: rt.fallbacks.Load(),
		}
		b, err := e.store.Breaker(ctx, targetKey(rt.name))
		if err == nil {
			ts.Breaker = breakerState(&b)
			if ts.Breaker == state.Open {
				ts.OpenUntil = b.OpenUntil
			}
		}
		prov, _, _ := catalog.SplitTarget(rt.name)
		if kb, err := e.store.Breaker(ctx, keyKey(prov)); err == nil && breakerState(&kb) != state.Closed && ts.Breaker == state.Closed {
			ts.Breaker = breakerState(&kb)
			if ts.Breaker == state.Open {
				ts.OpenUntil = kb.OpenUntil
			}
		}
		rt.mu.Lock()
		ts.LastError, ts.LastFailed = rt.lastErr, rt.lastFailed
		rt.mu.Unlock()
		out = append(out, ts)
	}
	return out
}

func targetKey(name string) string { return "target/" + name }
func keyKey(prov string) string    { return "key/" + prov }

func (e *Engine) jitter(n int, p retryPolicy, hint time.Duration) time.Duration {
	e.randMu.Lock()
	defer e.randMu.Unlock()
	return backoff(n, p.base, p.maxDelay, hint, e.rnd)
}

// randDuration is uniform in [0, d).
func (e *Engine) randDuration(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	e.randMu.Lock()
	defer e.randMu.Unlock()
	return time.Duration(e.rnd.Int64N(int64(d)))
}

// Chat runs a non-streaming call over its route. On failure it returns a
// *RouteError (or the static fallback, labelled, when the route has one).
func (e *Engine) Chat(ctx context.Context, c *Call) (*Result, error) {
	if c == nil || c.Request == nil {
		return nil, errors.New("resilience: Call or Call.Request is nil")
	}
	rp, err := e.plan(c)
	if err != nil {
		return nil, err
	}
	if key := e.idempotencyKey(rp, c); key != "" {
		return e.chatOnce(ctx, rp, c, key)
	}
	return e.chat(ctx, rp, c)
}

func (e *Engine) chat(ctx context.Context, rp *routePlan, c *Call) (*Result, error) {
	rk, err := e.repeatOf(rp, c)
	if err != nil {
		return nil, err
	}
	cs := e.newCallState(ctx, rp, c)
	// No context deadline here: every wait (attempt, queue, backoff) is
	// bounded by the time left, which saves a timer.
	out, t, err := cs.walk(ctx, false)
	if err != nil {
		if r := cs.static(); r != nil {
			return r, nil
		}
		e.holdFailure(ctx, rp, c, rk, err)
		return nil, err
	}
	res := &Result{
		Response:  out.resp,
		Target:    t.name,
		Attempts:  cs.total,
		Fallbacks: cs.fallbacks,
		Waited:    cs.waited,
		Cost:      cost(t, out.resp.Usage),
	}
	return res, nil
}

// Stream runs a streaming call over its route and returns once the first
// token arrived: the first chunk with content (text, a tool call delta,
// thinking or a finish reason). A failure or a stall before it, even after
// metadata-only chunks, falls back like a failed request. The returned
// Stream replays every chunk received so far, then applies the route's idle
// timeout. The call's deadline bounds the time to the first token; after it
// only the idle timeout and ctx bound the stream. The caller must Close it.
func (e *Engine) Stream(ctx context.Context, c *Call) (*StreamResult, error) {
	if c == nil || c.Request == nil {
		return nil, errors.New("resilience: Call or Call.Request is nil")
	}
	rp, err := e.plan(c)
	if err != nil {
		return nil, err
	}
	key := e.idempotencyKey(rp, c)
	if key != "" {
		if sr, ok := e.streamCached(rp, c, key); ok {
			return sr, nil
		}
	}
	rk, err := e.repeatOf(rp, c)
	if err != nil {
		return nil, err
	}
	cs := e.newCallState(ctx, rp, c)
	out, t, err := cs.walk(ctx, true)
	if err != nil {
		if r := cs.static(); r != nil {
			return &StreamResult{Stream: newStaticStream(r.Response), Target: r.Target, Static: true,
				Attempts: cs.total, Fallbacks: cs.fallbacks, Waited: cs.waited}, nil
		}
		e.holdFailure(ctx, rp, c, rk, err)
		return nil, err
	}
	var st provider.Stream = out.stream
	if key != "" {
		st = e.recordStream(st, rp, key, t)
	}
	return &StreamResult{Stream: st, Target: t.name, Attempts: cs.total,
		Fallbacks: cs.fallbacks, Waited: cs.waited}, nil
}

func cost(t *targetPlan, u provider.Usage) float64 {
	if !t.priced {
		return 0
	}
	return t.price.Cost(u.InputTokens, u.OutputTokens)
}

// timeoutError is the verdict for an attempt the engine timed out itself.
func timeoutError(t *targetPlan, what string, afterFirst bool) *provider.Error {
	return &provider.Error{
		Provider:        t.provider,
		Model:           t.model,
		AfterFirstToken: afterFirst,
		Verdict: classify.Verdict{
			Class:     classify.Timeout,
			Retryable: true,
			Scope:     classify.ScopeModel,
			Fallback:  true,
			Message:   "timeout: " + what,
		},
		Err: context.DeadlineExceeded,
	}
}

// asProviderError returns err as a *provider.Error, wrapping an error an
// adapter should not have returned as an unknown, fallback-able failure.
func asProviderError(t *targetPlan, err error) *provider.Error {
	if pe := provider.AsError(err); pe != nil {
		return pe
	}
	return &provider.Error{
		Provider: t.provider,
		Model:    t.model,
		Verdict: classify.Verdict{
			Class:    classify.Unknown,
			Scope:    classify.ScopeModel,
			Fallback: true,
			Message:  "unknown: " + classify.Line(err.Error()),
		},
		Err: err,
	}
}
