package config

import (
	"strings"
	"time"

	"github.com/llmguard/llmguard/resilience"
)

// The schema's policy structs mirror resilience's field for field, so each
// converts to the policy it configures by a plain Go conversion (a field
// added to one and not the other fails to compile).

// TargetPolicy is the effective policy of one target of a route: the
// route's settings with the target's overrides merged over them.
type TargetPolicy struct {
	// Target is "provider/model"; Provider and Model are its parts.
	Target, Provider, Model string
	// Timeout is the route's one deadline for the whole call.
	Timeout time.Duration
	Retry   Retry
	Stream  StreamPolicy
	Breaker Breaker
	// MaxConcurrency caps in-flight calls on this target (0 = unlimited).
	MaxConcurrency int
	QueueTimeout   time.Duration
}

// TargetPolicy returns the effective policy of r.Targets[i] (see PolicyFor).
// It panics if i is out of range. It allocates nothing and is safe for
// concurrent use on a loaded Config.
func (r *Route) TargetPolicy(i int) TargetPolicy { return r.PolicyFor(r.Targets[i]) }

// PolicyFor returns the effective policy of target t under route r, whether
// or not t is one of r's targets (a call's own fallbacks run under the
// route's policies): each non-zero field of t's retry and breaker overrides,
// and a non-zero max_concurrency, replace the route's (see
// resilience.Retry.Merge). It allocates nothing.
func (r *Route) PolicyFor(t Target) TargetPolicy {
	p := TargetPolicy{
		Target: t.Target, Provider: t.Provider(), Model: t.Model(),
		Timeout: r.Timeout, Stream: r.Stream,
		Retry:          Retry(resilience.Retry(r.Retry).Merge((*resilience.Retry)(t.Retry))),
		Breaker:        Breaker(resilience.Breaker(r.Breaker).Merge((*resilience.Breaker)(t.Breaker))),
		MaxConcurrency: r.MaxConcurrency, QueueTimeout: r.QueueTimeout,
	}
	if t.MaxConcurrency != 0 {
		p.MaxConcurrency = t.MaxConcurrency
	}
	return p
}

// Policy returns the route as the engine runs it.
func (r *Route) Policy() resilience.Route {
	p := resilience.Route{
		Targets:                 make([]resilience.Target, len(r.Targets)),
		ByCost:                  strings.EqualFold(strings.TrimSpace(r.Order), "cost"),
		Timeout:                 r.Timeout,
		MaxClientWait:           r.MaxClientWait,
		RepeatHold:              r.RepeatHold,
		Retry:                   resilience.Retry(r.Retry),
		Stream:                  resilience.Timeouts(r.Stream),
		Breaker:                 resilience.Breaker(r.Breaker),
		MaxConcurrency:          r.MaxConcurrency,
		QueueTimeout:            r.QueueTimeout,
		HedgeAfter:              r.HedgeAfter,
		Hedge:                   resilience.Hedge(r.Hedge),
		Cache:                   resilience.Cache(r.Cache),
		FallbackOnContentFilter: r.FallbackOnContentFilter,
		MaxCostUSD:              r.MaxCostUSD,
		StaticFallback:          r.StaticFallback,
	}
	for i, t := range r.Targets {
		p.Targets[i] = resilience.Target{Name: t.Target, Retry: (*resilience.Retry)(t.Retry),
			Breaker: (*resilience.Breaker)(t.Breaker), MaxConcurrency: t.MaxConcurrency}
	}
	return p
}

// EngineOptions returns the engine's options for this configuration: every
// route (see Route.Policy) and the catalogue (see Catalog). The caller adds
// the adapters, and any logger, store and event hook.
func (c *Config) EngineOptions() *resilience.Options {
	o := &resilience.Options{Routes: make(map[string]resilience.Route, len(c.Routes)), Catalog: c.Catalog()}
	for name, r := range c.Routes {
		if r == nil {
			r = &Route{}
		}
		o.Routes[name] = r.Policy()
	}
	return o
}
