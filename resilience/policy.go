package resilience

import (
	"time"
)

// The policy types. Each is a plain struct whose zero fields mean their
// documented defaults: New resolves every route once (see resolveRoute), so
// a Route built in Go needs only what differs. Where zero is itself a
// setting (no retry budget, no breaker floor, never telling a client to
// wait), the field is a pointer: nil takes the default, a pointer to 0 is
// an explicit zero (new(0.0), new(0)). A negative value counts as zero.
// DefaultRoute lists every default.

// Route is an ordered list of targets and the policies of calls over it.
type Route struct {
	// Targets are tried in this order ("provider/model", each with optional
	// overrides), unless ByCost. A call's own fallbacks follow them.
	Targets []Target
	// ByCost tries Targets cheapest first (catalog.SortByCost, with the
	// prices of Options.Catalog; false: as listed).
	ByCost bool
	// Timeout is the one deadline of a whole call: every attempt, backoff
	// and queue wait (0 = 60s). For a stream it bounds the time to the
	// first token.
	Timeout time.Duration
	// MaxClientWait is the longest wait a failed call tells its client to
	// sleep before retrying (RouteError.ClientWait; nil = 30s, a pointer to
	// 0 = never).
	MaxClientWait *time.Duration
	// RepeatHold is how long a failure the engine retried to exhaustion
	// answers identical calls that carry a Call.RepeatScope, with no
	// upstream attempt (see repeat.go; nil = 150s, a pointer to 0 = never).
	// A target of the route answering any call ends it sooner.
	RepeatHold *time.Duration
	// Retry is the retry policy of each target (see Target.Retry).
	Retry Retry
	// Stream bounds each attempt: its headers, its first token, and a
	// stream's silences.
	Stream Timeouts
	// Breaker is the circuit-breaker policy of each target (see Target.Breaker).
	Breaker Breaker
	// MaxConcurrency caps the calls in flight on each target (0 = no cap).
	// The cap is the target's, shared by every route that lists it: the
	// smallest non-zero one any route gives it.
	MaxConcurrency int
	// QueueTimeout bounds the wait for a concurrency slot, and for a
	// pacing turn when the target's announced rate limit is spent (0 = 5s).
	QueueTimeout time.Duration
	// HedgeAfter starts the next target too when the first attempt has no
	// answer (a stream: no first token) after this long (0 = never).
	HedgeAfter time.Duration
	// Hedge is the first-token hedge of streams.
	Hedge Hedge
	// Cache stores successful results (zero TTL: only calls with an
	// IdempotencyKey are deduplicated).
	Cache Cache
	// FallbackOnContentFilter lets a content_filtered failure fall back to
	// the next target (false: the call fails with the filter's verdict).
	FallbackOnContentFilter bool
	// MaxCostUSD is a spend ceiling per call in dollars (0 = none): an
	// attempt whose estimated cost exceeds what is left after the call's
	// failed attempts is not made (see cost.go).
	MaxCostUSD float64
	// StaticFallback maps a prompt (the last user message, trimmed and
	// case-folded) to a canned answer served, labelled, when every target
	// failed; key "*" answers any prompt (nil = none).
	StaticFallback map[string]string
}

// Target is one "provider/model" of a route with its overrides of the
// route's policies.
type Target struct {
	// Name is "provider/model"; the provider names an adapter (Options.Adapters).
	Name string
	// Retry's fields override the route's, each that is not zero (nil: none).
	Retry *Retry
	// Breaker's fields override the route's, each that is not zero (nil: none).
	Breaker *Breaker
	// MaxConcurrency, when not zero, overrides the route's.
	MaxConcurrency int
}

// Retry is the retry policy on one target.
type Retry struct {
	// MaxAttempts per target, the first attempt included (0 = 4).
	MaxAttempts int
	// MaxTotalAttempts across the whole route (0 = 10).
	MaxTotalAttempts int
	// BaseDelay of the full-jitter exponential backoff (0 = 500ms).
	BaseDelay time.Duration
	// MaxDelay caps the backoff, though never a longer wait the server
	// asked for (0 = 30s).
	MaxDelay time.Duration
	// MaxWait: a server asking for a longer wait moves the call on to the
	// next target at once (0 = 60s).
	MaxWait time.Duration
	// Budget bounds the retries in flight on a target to this share of
	// its calls in flight (nil = 0.5; a pointer to 0: MinRetryConcurrency alone).
	Budget *float64
	// MinRetryConcurrency retries may be in flight whatever the budget
	// (nil = 3).
	MinRetryConcurrency *int
}

// Timeouts bound each upstream attempt (each is cut to the call's time
// left).
type Timeouts struct {
	// FirstTokenTimeout: no first token this long after the headers moves
	// on (0 = 15s).
	FirstTokenTimeout time.Duration
	// IdleTimeout: a stream silent this long has stalled (0 = 20s).
	IdleTimeout time.Duration
	// HeaderTimeout: no response headers within this moves on (0 = 30s).
	HeaderTimeout time.Duration
	// SilentAfter: a streaming attempt that got no response headers for
	// longer than this, then lost its connection, timed out: the call
	// falls back and does not retry the target (0 = 5s; see silent.go).
	SilentAfter time.Duration
}

// Breaker is the circuit-breaker policy of one target. It opens on a
// failure rate over a sliding window, never on a run of failures: with at
// least MinCalls calls in Window, at least Failures of them failed and a
// failed share of at least FailureRatio beyond chance. See breaker.go.
type Breaker struct {
	// Failures is the fewest failures in Window that open it (nil = 5; a
	// pointer to 0: no floor beyond FailureRatio and MinCalls).
	Failures *int
	// FailureRatio is the failed share of Window's calls that opens it
	// (nil = 0.5; a pointer to 0: it never opens on ill health).
	FailureRatio *float64
	// MinCalls is the fewest calls in Window before it may open (0 = 20).
	MinCalls int
	// Window is the sliding window of the failure rate (0 = 10s).
	Window time.Duration
	// InitialCooldown is how long it stays open the first time before
	// half-opening (0 = 5s); each re-opening without a close doubles it.
	InitialCooldown time.Duration
	// Cooldown is the longest it stays open (0 = 60s).
	Cooldown time.Duration
	// Probes is the fewest calls admitted at once while half-open (0 = 3;
	// more in proportion to the calls asking). The first to succeed closes
	// the breaker; Probes failures without a success re-open it.
	Probes int
}

// Cache is a route's store of successful results.
type Cache struct {
	// TTL keeps each success this long for identical calls (0 = no cache).
	TTL time.Duration
	// MaxEntries bounds the stored results (0 = 10000).
	MaxEntries int
	// MaxBytes bounds the stored results' size (0 = 64 MiB).
	MaxBytes int64
}

// Merge returns r with each field of o that is not zero in its place (a
// nil o, or a nil or zero field, keeps r's): a target's override.
func (r Retry) Merge(o *Retry) Retry {
	if o != nil {
		set(&r.MaxAttempts, o.MaxAttempts)
		set(&r.MaxTotalAttempts, o.MaxTotalAttempts)
		set(&r.BaseDelay, o.BaseDelay)
		set(&r.MaxDelay, o.MaxDelay)
		set(&r.MaxWait, o.MaxWait)
		setPtr(&r.Budget, o.Budget)
		setPtr(&r.MinRetryConcurrency, o.MinRetryConcurrency)
	}
	return r
}

// Merge returns b with each field of o that is not zero in its place (a
// nil o, or a nil or zero field, keeps b's): a target's override.
func (b Breaker) Merge(o *Breaker) Breaker {
	if o != nil {
		setPtr(&b.Failures, o.Failures)
		setPtr(&b.FailureRatio, o.FailureRatio)
		set(&b.MinCalls, o.MinCalls)
		set(&b.Window, o.Window)
		set(&b.InitialCooldown, o.InitialCooldown)
		set(&b.Cooldown, o.Cooldown)
		set(&b.Probes, o.Probes)
	}
	return b
}

type number interface {
	~int | ~int64 | ~float64
}

func set[T number](dst *T, v T) {
	if v != 0 {
		*dst = v
	}
}

func setPtr[T number](dst **T, v *T) {
	if v != nil && *v != 0 {
		*dst = v
	}
}

// Hedge is a route's first-token hedge: a stream whose first attempt has
// no content token after FirstTokenAfter starts the next target too (on a
// route with a fallback); the first content token wins and the other is
// cancelled. The first-token timeout stays the backstop. Route.HedgeAfter,
// when set, hedges every call instead.
type Hedge struct {
	// FirstTokenAfter: nil = 8s, a pointer to 0 = no first-token hedge.
	FirstTokenAfter *time.Duration
}

// Defaults: what a zero field of each policy means.
const (
	defaultTimeout       = 60 * time.Second
	defaultMaxClientWait = 30 * time.Second
	// defaultRepeatHold covers the retry schedules of the clients that
	// ignore x-should-retry: LangChain JS's six retries come within 126s of
	// the first failure, the Vercel AI SDK's two within 6s.
	defaultRepeatHold             = 150 * time.Second
	defaultFirstTokenHedge        = 8 * time.Second
	defaultMaxAttempts            = 4
	defaultMaxTotalAttempts       = 10
	defaultBaseDelay              = 500 * time.Millisecond
	defaultMaxDelay               = 30 * time.Second
	defaultMaxWait                = 60 * time.Second
	defaultBudget                 = 0.5
	defaultMinRetryConcurrency    = 3
	defaultFirstTokenTimeout      = 15 * time.Second
	defaultIdleTimeout            = 20 * time.Second
	defaultHeaderTimeout          = 30 * time.Second
	defaultSilentAfter            = 5 * time.Second
	defaultBreakerFailures        = 5
	defaultBreakerFailureRatio    = 0.5
	defaultBreakerMinCalls        = 20
	defaultBreakerWindow          = 10 * time.Second
	defaultBreakerInitialCooldown = 5 * time.Second
	defaultBreakerCooldown        = 60 * time.Second
	defaultBreakerProbes          = 3
	defaultQueueTimeout           = 5 * time.Second
	defaultCacheMaxEntries        = 10000
	defaultCacheMaxBytes          = 64 << 20
	// idempotencyTTL keeps the results of calls with an explicit
	// IdempotencyKey when their route has no cache TTL.
	idempotencyTTL = 10 * time.Minute
)

// DefaultRoute returns a route with every policy at its documented
// default, each field set, and no targets: what the zero fields of a Route
// mean.
func DefaultRoute() Route {
	return Route{
		Timeout:       defaultTimeout,
		MaxClientWait: new(time.Duration(defaultMaxClientWait)),
		RepeatHold:    new(time.Duration(defaultRepeatHold)),
		Hedge:         Hedge{FirstTokenAfter: new(time.Duration(defaultFirstTokenHedge))},
		Retry: Retry{
			MaxAttempts: defaultMaxAttempts, MaxTotalAttempts: defaultMaxTotalAttempts,
			BaseDelay: defaultBaseDelay, MaxDelay: defaultMaxDelay, MaxWait: defaultMaxWait,
			Budget: new(float64(defaultBudget)), MinRetryConcurrency: new(int(defaultMinRetryConcurrency)),
		},
		Stream: Timeouts{FirstTokenTimeout: defaultFirstTokenTimeout, IdleTimeout: defaultIdleTimeout, HeaderTimeout: defaultHeaderTimeout,
			SilentAfter: defaultSilentAfter},
		Breaker: Breaker{
			Failures: new(int(defaultBreakerFailures)), FailureRatio: new(float64(defaultBreakerFailureRatio)),
			MinCalls: defaultBreakerMinCalls, Window: defaultBreakerWindow,
			InitialCooldown: defaultBreakerInitialCooldown, Cooldown: defaultBreakerCooldown, Probes: defaultBreakerProbes,
		},
		QueueTimeout: defaultQueueTimeout,
		Cache:        Cache{MaxEntries: defaultCacheMaxEntries, MaxBytes: defaultCacheMaxBytes},
	}
}

// retryPolicy is a resolved Retry: every field effective.
type retryPolicy struct {
	maxAttempts, maxTotal int
	base, maxDelay        time.Duration
	maxWait               time.Duration
	budget                float64
	minConcurrency        int
}

// breakerPolicy is a resolved Breaker (see breaker.go).
type breakerPolicy struct {
	failures int     // fewest failures in the window that open it
	ratio    float64 // failed share of the window's calls that opens it (0: never)
	minCalls int     // fewest calls in the window before it may open
	window   time.Duration
	initial  time.Duration // the first opening's cooldown
	cooldown time.Duration // the longest cooldown
	probes   int           // fewest probes at once while half-open
}

// routePolicy is a resolved Route, less its targets.
type routePolicy struct {
	timeout                       time.Duration
	clientWait                    time.Duration
	repeatHold                    time.Duration
	headerTimeout                 time.Duration
	silentAfter                   time.Duration
	firstTokenTimeout             time.Duration
	idleTimeout                   time.Duration
	queueTimeout                  time.Duration
	hedgeAfter                    time.Duration
	firstTokenHedge               time.Duration
	cacheTTL                      time.Duration
	cacheMaxEntries, cacheMaxByte int64
	fallbackOnFilter              bool
	maxCost                       float64
	static                        map[string]string
	retry                         retryPolicy
	breaker                       breakerPolicy
}

// resolveRoute applies the defaults to r's zero fields: the one place they
// are applied.
func resolveRoute(r *Route) routePolicy {
	return routePolicy{
		timeout:           or(r.Timeout, defaultTimeout),
		clientWait:        orPtr(r.MaxClientWait, defaultMaxClientWait),
		repeatHold:        orPtr(r.RepeatHold, defaultRepeatHold),
		headerTimeout:     or(r.Stream.HeaderTimeout, defaultHeaderTimeout),
		silentAfter:       or(r.Stream.SilentAfter, defaultSilentAfter),
		firstTokenTimeout: or(r.Stream.FirstTokenTimeout, defaultFirstTokenTimeout),
		idleTimeout:       or(r.Stream.IdleTimeout, defaultIdleTimeout),
		queueTimeout:      or(r.QueueTimeout, defaultQueueTimeout),
		hedgeAfter:        max(r.HedgeAfter, 0),
		firstTokenHedge:   orPtr(r.Hedge.FirstTokenAfter, defaultFirstTokenHedge),
		cacheTTL:          max(r.Cache.TTL, 0),
		cacheMaxEntries:   int64(or(r.Cache.MaxEntries, defaultCacheMaxEntries)),
		cacheMaxByte:      or(r.Cache.MaxBytes, defaultCacheMaxBytes),
		fallbackOnFilter:  r.FallbackOnContentFilter,
		maxCost:           max(r.MaxCostUSD, 0),
		static:            r.StaticFallback,
		retry:             resolveRetry(&r.Retry),
		breaker:           resolveBreaker(&r.Breaker),
	}
}

func resolveRetry(r *Retry) retryPolicy {
	return retryPolicy{
		maxAttempts:    or(r.MaxAttempts, defaultMaxAttempts),
		maxTotal:       or(r.MaxTotalAttempts, defaultMaxTotalAttempts),
		base:           or(r.BaseDelay, defaultBaseDelay),
		maxDelay:       or(r.MaxDelay, defaultMaxDelay),
		maxWait:        or(r.MaxWait, defaultMaxWait),
		budget:         orPtr(r.Budget, defaultBudget),
		minConcurrency: orPtr(r.MinRetryConcurrency, defaultMinRetryConcurrency),
	}
}

func resolveBreaker(b *Breaker) breakerPolicy {
	return breakerPolicy{
		failures: orPtr(b.Failures, defaultBreakerFailures),
		ratio:    orPtr(b.FailureRatio, defaultBreakerFailureRatio),
		minCalls: or(b.MinCalls, defaultBreakerMinCalls),
		window:   or(b.Window, defaultBreakerWindow),
		initial:  or(b.InitialCooldown, defaultBreakerInitialCooldown),
		cooldown: or(b.Cooldown, defaultBreakerCooldown),
		probes:   or(b.Probes, defaultBreakerProbes),
	}
}

// or is v when positive, else def.
func or[T number](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// orPtr is *p when set (a negative value as 0), else def.
func orPtr[T number](p *T, def T) T {
	if p == nil {
		return def
	}
	return max(*p, 0)
}
