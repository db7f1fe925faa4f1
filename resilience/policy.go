package resilience

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/provider"
)

// Defaults applied to zero config values: config's documented defaults.
const (
	DefaultTimeout                = config.DefaultTimeout
	DefaultMaxClientWait          = config.DefaultMaxClientWait
	DefaultMaxAttempts            = config.DefaultMaxAttempts
	DefaultMaxTotalAttempts       = config.DefaultMaxTotalAttempts
	DefaultBaseDelay              = config.DefaultBaseDelay
	DefaultMaxDelay               = config.DefaultMaxDelay
	DefaultMaxWait                = config.DefaultMaxWait
	DefaultBudget                 = config.DefaultBudget
	DefaultMinRetryConcurrency    = config.DefaultMinRetryConcurrency
	DefaultFirstTokenTimeout      = config.DefaultFirstTokenTimeout
	DefaultIdleTimeout            = config.DefaultIdleTimeout
	DefaultHeaderTimeout          = config.DefaultHeaderTimeout
	DefaultBreakerFailures        = config.DefaultBreakerFailures
	DefaultBreakerFailureRatio    = config.DefaultBreakerFailureRatio
	DefaultBreakerMinCalls        = config.DefaultBreakerMinCalls
	DefaultBreakerWindow          = config.DefaultBreakerWindow
	DefaultBreakerInitialCooldown = config.DefaultBreakerInitialCooldown
	DefaultBreakerCooldown        = config.DefaultBreakerCooldown
	DefaultBreakerProbes          = config.DefaultBreakerProbes
	DefaultQueueTimeout           = config.DefaultQueueTimeout
	DefaultCacheMaxEntries        = config.DefaultCacheMaxEntries
	DefaultCacheMaxBytes          = config.DefaultCacheMaxBytes
	// DefaultIdempotencyTTL keeps results of calls with an explicit
	// IdempotencyKey when their route has no cache TTL.
	DefaultIdempotencyTTL = 10 * time.Minute
)

// retryPolicy is a resolved config.Retry (defaults applied).
type retryPolicy struct {
	maxAttempts, maxTotal int
	base, maxDelay        time.Duration
	maxWait               time.Duration
	budget                float64
	minConcurrency        int
}

// breakerPolicy is a resolved config.Breaker (see breaker.go).
type breakerPolicy struct {
	failures int     // fewest failures in the window that open it
	ratio    float64 // failed share of the window's calls that opens it (0: never)
	minCalls int     // fewest calls in the window before it may open
	window   time.Duration
	initial  time.Duration // the first opening's cooldown
	cooldown time.Duration // the longest cooldown
	probes   int           // fewest probes at once while half-open
}

// targetPlan is one target of a route with its resolved policies.
type targetPlan struct {
	name     string // provider/model
	tkey     string // the target's breaker key
	kkey     string // its provider key's breaker key
	keyLabel string // "key <provider>", for events
	provider string
	model    string
	adapter  provider.Adapter
	retry    retryPolicy
	breaker  breakerPolicy
	rt       *targetRuntime
	// window is the model's context window in tokens (0 = unknown).
	window int
	price  catalog.Price
	priced bool
}

// routePlan is a route with resolved policies and targets in effective order.
type routePlan struct {
	name                          string
	targets                       []*targetPlan
	timeout                       time.Duration
	clientWait                    time.Duration
	headerTimeout                 time.Duration
	firstTokenTimeout             time.Duration
	idleTimeout                   time.Duration
	queueTimeout                  time.Duration
	hedgeAfter                    time.Duration
	cacheTTL                      time.Duration
	maxTotal                      int
	fallbackOnFilter              bool
	static                        map[string]string
	retry                         retryPolicy
	breaker                       breakerPolicy
	maxConcurrency                int
	cfgRoute                      *config.Route
	targetNames                   []string
	cacheMaxEntries, cacheMaxByte int64
}

func durOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func intOr(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// resolveRetry applies defaults. For Budget and MinRetryConcurrency a zero
// is explicit when the config was loaded (provisioned: config.Load and
// config.FromEnv fill every absent key, so zero is what the user wrote) and
// means the default for a Config built in Go; a negative value always means zero.
func resolveRetry(r config.Retry, provisioned bool) retryPolicy {
	p := retryPolicy{
		maxAttempts:    intOr(r.MaxAttempts, DefaultMaxAttempts),
		maxTotal:       intOr(r.MaxTotalAttempts, DefaultMaxTotalAttempts),
		base:           durOr(r.BaseDelay, DefaultBaseDelay),
		maxDelay:       durOr(r.MaxDelay, DefaultMaxDelay),
		maxWait:        durOr(r.MaxWait, DefaultMaxWait),
		budget:         r.Budget,
		minConcurrency: r.MinRetryConcurrency,
	}
	switch {
	case p.budget == 0 && !provisioned:
		p.budget = DefaultBudget
	case p.budget < 0:
		p.budget = 0
	}
	switch {
	case p.minConcurrency == 0 && !provisioned:
		p.minConcurrency = DefaultMinRetryConcurrency
	case p.minConcurrency < 0:
		p.minConcurrency = 0
	}
	return p
}

// clientWait resolves max_client_wait: a zero is explicit (never tell a
// client to wait) in a loaded config and the default in one built in Go;
// negative means zero.
func clientWait(d time.Duration, provisioned bool) time.Duration {
	switch {
	case d == 0 && !provisioned:
		return DefaultMaxClientWait
	case d < 0:
		return 0
	}
	return d
}

// resolveBreaker applies defaults. As for the retry budget, a zero Failures
// or FailureRatio is explicit in a loaded config (no floor; never opens on
// ill health) and means the default in a Config built in Go.
func resolveBreaker(b config.Breaker, provisioned bool) breakerPolicy {
	p := breakerPolicy{
		failures: b.Failures,
		ratio:    b.FailureRatio,
		minCalls: intOr(b.MinCalls, DefaultBreakerMinCalls),
		window:   durOr(b.Window, DefaultBreakerWindow),
		initial:  durOr(b.InitialCooldown, DefaultBreakerInitialCooldown),
		cooldown: durOr(b.Cooldown, DefaultBreakerCooldown),
		probes:   intOr(b.Probes, DefaultBreakerProbes),
	}
	if !provisioned {
		p.failures = intOr(p.failures, DefaultBreakerFailures)
		if p.ratio == 0 {
			p.ratio = DefaultBreakerFailureRatio
		}
	}
	p.failures = max(p.failures, 0)
	return p
}

// newRoutePlan resolves a route: r.Targets, then extra (a call's named
// target and Fallbacks), duplicates dropped. order: cost sorts only the
// route's own targets; extra follows them in the order given.
func (e *Engine) newRoutePlan(name string, r *config.Route, extra []config.Target) (*routePlan, error) {
	if r == nil {
		r = &config.Route{}
	}
	rp := &routePlan{
		name:              name,
		timeout:           durOr(r.Timeout, DefaultTimeout),
		clientWait:        clientWait(r.MaxClientWait, e.provisioned),
		headerTimeout:     durOr(r.Stream.HeaderTimeout, DefaultHeaderTimeout),
		firstTokenTimeout: durOr(r.Stream.FirstTokenTimeout, DefaultFirstTokenTimeout),
		idleTimeout:       durOr(r.Stream.IdleTimeout, DefaultIdleTimeout),
		queueTimeout:      durOr(r.QueueTimeout, DefaultQueueTimeout),
		hedgeAfter:        r.HedgeAfter,
		cacheTTL:          r.Cache.TTL,
		fallbackOnFilter:  r.FallbackOnContentFilter,
		static:            r.StaticFallback,
		retry:             resolveRetry(r.Retry, e.provisioned),
		breaker:           resolveBreaker(r.Breaker, e.provisioned),
		maxConcurrency:    r.MaxConcurrency,
		cfgRoute:          r,
		cacheMaxEntries:   int64(intOr(r.Cache.MaxEntries, DefaultCacheMaxEntries)),
		cacheMaxByte:      r.Cache.MaxBytes,
	}
	if rp.cacheMaxByte <= 0 {
		rp.cacheMaxByte = DefaultCacheMaxBytes
	}
	rp.maxTotal = rp.retry.maxTotal
	all := make([]config.Target, 0, len(r.Targets)+len(extra))
	all = append(all, r.Targets...)
	all = append(all, extra...)
	seen := make(map[string]bool, len(all))
	own := 0 // how many of rp.targets come from r.Targets
	for i, ct := range all {
		prov, model, ok := catalog.SplitTarget(ct.Target)
		if !ok {
			return nil, fmt.Errorf("route %q: targets[%d]: %q is not provider/model", name, i, ct.Target)
		}
		tname := prov + "/" + model
		if seen[tname] {
			continue
		}
		seen[tname] = true
		ad, ok := e.adapters[prov]
		if !ok || ad == nil {
			return nil, fmt.Errorf("route %q: targets[%d]: no adapter for provider %q", name, i, prov)
		}
		tp := &targetPlan{
			name:     tname,
			tkey:     targetKey(tname),
			kkey:     keyKey(prov),
			keyLabel: "key " + prov,
			provider: prov,
			model:    model,
			adapter:  ad,
		}
		pol := r.PolicyFor(ct)
		tp.retry = resolveRetry(pol.Retry, e.provisioned)
		tp.breaker = resolveBreaker(pol.Breaker, e.provisioned)
		tp.window = e.cat.Model(prov, model).ContextWindow
		tp.price, tp.priced = e.cat.Price(prov, model)
		tp.rt = e.runtime(tname, pol.MaxConcurrency)
		rp.targets = append(rp.targets, tp)
		if i < len(r.Targets) {
			own++
		}
	}
	if strings.EqualFold(r.Order, "cost") {
		catalog.SortByCost(rp.targets[:own], func(t *targetPlan) (catalog.Price, bool) { return t.price, t.priced })
	}
	for _, t := range rp.targets {
		rp.targetNames = append(rp.targetNames, t.name)
	}
	return rp, nil
}
