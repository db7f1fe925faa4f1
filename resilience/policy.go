package resilience

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/provider"
)

// Defaults applied to zero config values. They match config's documented defaults.
const (
	DefaultTimeout             = 60 * time.Second
	DefaultMaxAttempts         = 4
	DefaultMaxTotalAttempts    = 10
	DefaultBaseDelay           = 500 * time.Millisecond
	DefaultMaxDelay            = 30 * time.Second
	DefaultMaxWait             = 60 * time.Second
	DefaultBudget              = 0.2
	DefaultMinRetryConcurrency = 3
	DefaultFirstTokenTimeout   = 15 * time.Second
	DefaultIdleTimeout         = 20 * time.Second
	DefaultHeaderTimeout       = 30 * time.Second
	DefaultBreakerFailures     = 5
	DefaultBreakerWindow       = 30 * time.Second
	DefaultBreakerCooldown     = 60 * time.Second
	DefaultBreakerProbes       = 1
	DefaultQueueTimeout        = 5 * time.Second
	DefaultCacheMaxEntries     = 10000
	DefaultCacheMaxBytes       = 64 << 20
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

// breakerPolicy is a resolved config.Breaker.
type breakerPolicy struct {
	failures int
	ratio    float64
	minCalls int
	window   time.Duration
	cooldown time.Duration
	probes   int
}

// targetPlan is one target of a route with its resolved policies.
type targetPlan struct {
	name     string // provider/model
	provider string
	model    string
	adapter  provider.Adapter
	retry    retryPolicy
	breaker  breakerPolicy
	rt       *targetRuntime
	// window is the model's context window in tokens (0 = unknown).
	window int
	price  config.Price
	priced bool
}

// routePlan is a route with resolved policies and targets in effective order.
type routePlan struct {
	name                          string
	targets                       []*targetPlan
	timeout                       time.Duration
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

// resolveRetry applies defaults. Budget and MinRetryConcurrency take a
// negative value to mean zero (0 means the default).
func resolveRetry(r config.Retry) retryPolicy {
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
	case p.budget == 0:
		p.budget = DefaultBudget
	case p.budget < 0:
		p.budget = 0
	}
	switch {
	case p.minConcurrency == 0:
		p.minConcurrency = DefaultMinRetryConcurrency
	case p.minConcurrency < 0:
		p.minConcurrency = 0
	}
	return p
}

func resolveBreaker(b config.Breaker) breakerPolicy {
	return breakerPolicy{
		failures: intOr(b.Failures, DefaultBreakerFailures),
		ratio:    b.FailureRatio,
		minCalls: intOr(b.MinCalls, 1),
		window:   durOr(b.Window, DefaultBreakerWindow),
		cooldown: durOr(b.Cooldown, DefaultBreakerCooldown),
		probes:   intOr(b.Probes, DefaultBreakerProbes),
	}
}

// mergeRetry overlays the non-zero fields of o on r.
func mergeRetry(r config.Retry, o *config.Retry) config.Retry {
	if o == nil {
		return r
	}
	if o.MaxAttempts != 0 {
		r.MaxAttempts = o.MaxAttempts
	}
	if o.MaxTotalAttempts != 0 {
		r.MaxTotalAttempts = o.MaxTotalAttempts
	}
	if o.BaseDelay != 0 {
		r.BaseDelay = o.BaseDelay
	}
	if o.MaxDelay != 0 {
		r.MaxDelay = o.MaxDelay
	}
	if o.MaxWait != 0 {
		r.MaxWait = o.MaxWait
	}
	if o.Budget != 0 {
		r.Budget = o.Budget
	}
	if o.MinRetryConcurrency != 0 {
		r.MinRetryConcurrency = o.MinRetryConcurrency
	}
	return r
}

// mergeBreaker overlays the non-zero fields of o on b.
func mergeBreaker(b config.Breaker, o *config.Breaker) config.Breaker {
	if o == nil {
		return b
	}
	if o.Failures != 0 {
		b.Failures = o.Failures
	}
	if o.FailureRatio != 0 {
		b.FailureRatio = o.FailureRatio
	}
	if o.MinCalls != 0 {
		b.MinCalls = o.MinCalls
	}
	if o.Window != 0 {
		b.Window = o.Window
	}
	if o.Cooldown != 0 {
		b.Cooldown = o.Cooldown
	}
	if o.Probes != 0 {
		b.Probes = o.Probes
	}
	return b
}

// splitTarget splits "provider/model" at the first slash (model ids may
// themselves contain slashes, as OpenRouter's do).
func splitTarget(s string) (prov, model string, ok bool) {
	prov, model, ok = strings.Cut(strings.TrimSpace(s), "/")
	return prov, model, ok && prov != "" && model != ""
}

// lookupModel finds a model's catalogue entry: "provider/model" first, then "model".
func lookupModel(cfg *config.Config, prov, model string) (config.ModelInfo, bool) {
	if cfg == nil {
		return config.ModelInfo{}, false
	}
	if mi, ok := cfg.Models[prov+"/"+model]; ok {
		return mi, true
	}
	mi, ok := cfg.Models[model]
	return mi, ok
}

// lookupPrice finds a model's price: "provider/model" first, then "model".
func lookupPrice(cfg *config.Config, prov, model string) (config.Price, bool) {
	if cfg == nil {
		return config.Price{}, false
	}
	if p, ok := cfg.Pricing[prov+"/"+model]; ok {
		return p, true
	}
	p, ok := cfg.Pricing[model]
	return p, ok
}

// newRoutePlan resolves a route. targets may be nil to use r.Targets.
func (e *Engine) newRoutePlan(name string, r *config.Route, extra []config.Target) (*routePlan, error) {
	if r == nil {
		r = &config.Route{}
	}
	rp := &routePlan{
		name:              name,
		timeout:           durOr(r.Timeout, DefaultTimeout),
		headerTimeout:     durOr(r.Stream.HeaderTimeout, DefaultHeaderTimeout),
		firstTokenTimeout: durOr(r.Stream.FirstTokenTimeout, DefaultFirstTokenTimeout),
		idleTimeout:       durOr(r.Stream.IdleTimeout, DefaultIdleTimeout),
		queueTimeout:      durOr(r.QueueTimeout, DefaultQueueTimeout),
		hedgeAfter:        r.HedgeAfter,
		cacheTTL:          r.Cache.TTL,
		fallbackOnFilter:  r.FallbackOnContentFilter,
		static:            r.StaticFallback,
		retry:             resolveRetry(r.Retry),
		breaker:           resolveBreaker(r.Breaker),
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
	for i, ct := range all {
		prov, model, ok := splitTarget(ct.Target)
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
			provider: prov,
			model:    model,
			adapter:  ad,
			retry:    resolveRetry(mergeRetry(r.Retry, ct.Retry)),
			breaker:  resolveBreaker(mergeBreaker(r.Breaker, ct.Breaker)),
		}
		if mi, ok := lookupModel(e.cfg, prov, model); ok {
			tp.window = mi.ContextWindow
		}
		tp.price, tp.priced = lookupPrice(e.cfg, prov, model)
		maxc := ct.MaxConcurrency
		if maxc == 0 {
			maxc = r.MaxConcurrency
		}
		tp.rt = e.runtime(tname, maxc)
		rp.targets = append(rp.targets, tp)
	}
	if strings.EqualFold(r.Order, "cost") {
		sort.SliceStable(rp.targets, func(i, j int) bool {
			a, b := rp.targets[i], rp.targets[j]
			if a.priced != b.priced {
				return a.priced // priced targets first, unknown prices last
			}
			return a.price.In+a.price.Out < b.price.In+b.price.Out
		})
	}
	for _, t := range rp.targets {
		rp.targetNames = append(rp.targetNames, t.name)
	}
	return rp, nil
}
