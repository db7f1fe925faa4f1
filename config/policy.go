package config

import "time"

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
// and a non-zero max_concurrency, replace the route's. It allocates nothing.
func (r *Route) PolicyFor(t Target) TargetPolicy {
	p := TargetPolicy{
		Target: t.Target, Provider: t.Provider(), Model: t.Model(),
		Timeout: r.Timeout, Retry: r.Retry, Stream: r.Stream, Breaker: r.Breaker,
		MaxConcurrency: r.MaxConcurrency, QueueTimeout: r.QueueTimeout,
	}
	if t.MaxConcurrency != 0 {
		p.MaxConcurrency = t.MaxConcurrency
	}
	if o := t.Retry; o != nil {
		over(&p.Retry.MaxAttempts, o.MaxAttempts)
		over(&p.Retry.MaxTotalAttempts, o.MaxTotalAttempts)
		over(&p.Retry.BaseDelay, o.BaseDelay)
		over(&p.Retry.MaxDelay, o.MaxDelay)
		over(&p.Retry.MaxWait, o.MaxWait)
		over(&p.Retry.Budget, o.Budget)
		over(&p.Retry.MinRetryConcurrency, o.MinRetryConcurrency)
	}
	if o := t.Breaker; o != nil {
		over(&p.Breaker.Failures, o.Failures)
		over(&p.Breaker.FailureRatio, o.FailureRatio)
		over(&p.Breaker.MinCalls, o.MinCalls)
		over(&p.Breaker.Window, o.Window)
		over(&p.Breaker.InitialCooldown, o.InitialCooldown)
		over(&p.Breaker.Cooldown, o.Cooldown)
		over(&p.Breaker.Probes, o.Probes)
	}
	return p
}

func over[T int | float64 | time.Duration](dst *T, v T) {
	if v != 0 {
		*dst = v
	}
}
