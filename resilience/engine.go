package resilience

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
)

// Options configures an Engine; every zero field means the documented
// default. config.Config.EngineOptions fills Routes and Catalog from a
// configuration file.
type Options struct {
	// Routes maps a route name to its targets and policies. Route
	// "default" serves calls that name no route, and lends its policies
	// to calls that name a "provider/model" (no "default": the defaults).
	Routes map[string]Route
	// Adapters maps a provider name (a target's part before the slash) to
	// its adapter.
	Adapters map[string]provider.Adapter
	// Catalog says what is known of each provider's models (price,
	// context window, prefill, vector size) and where a call whose Route
	// is a bare model name goes (its DefaultProvider; "" = such a call
	// fails with ErrUnknownRoute). nil is the built-in table alone.
	Catalog *catalog.Catalog
	// Rand is the jitter source (nil = a randomly seeded one).
	Rand *rand.Rand
	// OnEvent receives every event of every call (nil = none). It must not
	// block, and it is called concurrently (by concurrent calls, and by the
	// two branches of a hedge).
	OnEvent func(Event)
	// Logger (nil = slog.Default()).
	Logger *slog.Logger
	// Store holds circuit-breaker state (nil = a new in-memory store).
	// Engines sharing a Store share breakers, the pacing buckets set by
	// the rate limits targets announce and what they learned of targets
	// (see facts.go; with nil, those stay in the engine).
	Store state.Store
	// Results, when set, shares deduplicated calls' results and in-flight
	// claims with the engines on the same store (see Call.IdempotencyKey):
	// a duplicate of a call another engine is making waits for its result,
	// until the call's deadline. nil: results stay in this engine.
	Results state.ResultStore
	// Leases, when set, makes each target's concurrency cap hold across
	// the engines on the same store (see lease.go). nil: each engine
	// caps its own calls.
	Leases state.LeaseStore
}

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
	results      state.ResultStore
	leases       state.LeaseStore
	shared       bool          // Store was given: other engines may share its records (pacing, facts)
	leaseSeq     atomic.Uint64 // names this engine's leases
	id           string        // this engine among those sharing store (a replica)
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

// New builds an Engine from opts (nil: no routes and no adapters, so that
// every call fails). It fails when a route target is not "provider/model"
// or names a provider without an adapter.
func New(opts *Options) (*Engine, error) {
	o := defaults.Copy(opts)
	e := &Engine{
		adapters:     o.Adapters,
		cat:          o.Catalog,
		rnd:          o.Rand,
		onEvent:      o.OnEvent,
		log:          o.Logger,
		store:        o.Store,
		results:      o.Results,
		leases:       o.Leases,
		shared:       o.Store != nil,
		id:           strconv.FormatUint(rand.Uint64(), 36),
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

// Routes returns each configured route's targets in effective order
// (after cost ordering).
func (e *Engine) Routes() map[string][]string {
	m := make(map[string][]string, len(e.routes))
	for name, rp := range e.routes {
		m[name] = append([]string(nil), rp.targetNames...)
	}
	return m
}

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
	rp, err := e.planCall(c)
	if err != nil {
		return nil, err
	}
	if key := e.idempotencyKey(rp, c); key != "" {
		return e.chatOnce(ctx, rp, c, key)
	}
	return e.chat(ctx, rp, c)
}

func (e *Engine) chat(ctx context.Context, rp *routePlan, c *Call) (*Result, error) {
	w, err := e.run(ctx, rp, c, false)
	if w.static != nil || err != nil {
		return w.static, err
	}
	attempts, fallbacks, waited := w.cs.counts()
	return &Result{Response: w.out.resp, Target: w.t.name, Attempts: attempts, Fallbacks: fallbacks, Waited: waited,
		Cost: cost(w.t, w.out.resp.Usage), Wasted: w.cs.wastedUSD()}, nil
}

// Stream runs a streaming call over its route and returns once the first
// token arrived: the first chunk with content (text, a tool call delta,
// thinking or a finish reason). A failure or a stall before it, even after
// metadata-only chunks, falls back like a failed request. The returned
// Stream replays every chunk received so far, then applies the route's idle
// timeout. The call's deadline bounds the time to the first token; after it
// only the idle timeout and ctx bound the stream. A stream that breaks after
// its first token, having sent text only, is continued on a later target of
// the route (see continue.go and EventContinue). The caller must Close it.
func (e *Engine) Stream(ctx context.Context, c *Call) (*StreamResult, error) {
	rp, err := e.planCall(c)
	if err != nil {
		return nil, err
	}
	key := e.idempotencyKey(rp, c)
	if key != "" {
		if sr, ok := e.streamCached(rp, c, key); ok {
			return sr, nil
		}
	}
	w, err := e.run(ctx, rp, c, true)
	if err != nil {
		return nil, err
	}
	if r := w.static; r != nil {
		return &StreamResult{Stream: newStaticStream(r.Response), Target: r.Target, Static: true,
			Attempts: r.Attempts, Fallbacks: r.Fallbacks, Waited: r.Waited}, nil
	}
	var st provider.Stream = e.continuing(ctx, rp, c, w.out.stream, w.t)
	if key != "" {
		st = e.recordStream(st, rp, key, w.t)
	}
	attempts, fallbacks, waited := w.cs.counts()
	return &StreamResult{Stream: st, Target: w.t.name, Attempts: attempts, Fallbacks: fallbacks, Waited: waited, Wasted: w.cs.wastedUSD()}, nil
}

// planCall is the plan of a Chat's or Stream's call, which must have a
// Request.
func (e *Engine) planCall(c *Call) (*routePlan, error) {
	if c == nil || c.Request == nil {
		return nil, errors.New("resilience: Call or Call.Request is nil")
	}
	return e.plan(c)
}

// walked is what run's walk of a call answered: the target that answered
// and its answer, or, when the walk failed, the route's static answer.
type walked struct {
	cs     *callState
	out    answer
	t      *targetPlan
	static *Result
}

// run walks rp for c, the call's repeat hold checked first. A failed walk
// answers the route's static answer (and no error) when it has one, else
// holds the failure for the call's repeats and returns it. No context
// deadline here: every wait (attempt, queue, backoff) is bounded by the
// time left, which saves a timer.
func (e *Engine) run(ctx context.Context, rp *routePlan, c *Call, stream bool) (walked, error) {
	rk, err := e.repeatOf(rp, c)
	if err != nil {
		return walked{}, err
	}
	w := walked{cs: e.newCallState(ctx, rp, c)}
	w.out, w.t, err = w.cs.walk(ctx, stream)
	if err != nil {
		if w.static = w.cs.static(); w.static != nil {
			return w, nil
		}
		e.holdFailure(ctx, rp, c, rk, err)
	}
	return w, err
}

func cost(t *targetPlan, u provider.Usage) float64 {
	if !t.priced {
		return 0
	}
	return t.price.Cost(u.InputTokens, u.OutputTokens)
}
