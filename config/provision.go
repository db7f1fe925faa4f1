package config

import (
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/resilience"
)

const (
	// DefaultFile is the config file LoadDefault looks for in the working directory.
	DefaultFile = "llmguard.yaml"
	// SourceEnvironment is Config.Source for the zero-config built by FromEnv.
	SourceEnvironment = "environment"
)

// DefaultRoute returns a route with every policy at its documented default
// (resilience.DefaultRoute's) and no targets. A route decoded from YAML
// starts from it, so a key that is absent takes its default and an
// explicit value (0 included) is kept.
func DefaultRoute() Route {
	d := resilience.DefaultRoute()
	return Route{
		Order:         "priority",
		Timeout:       d.Timeout,
		MaxClientWait: d.MaxClientWait,
		RepeatHold:    d.RepeatHold,
		Retry:         Retry(d.Retry),
		Stream:        StreamPolicy(d.Stream),
		Breaker:       Breaker(d.Breaker),
		QueueTimeout:  d.QueueTimeout,
		Hedge:         Hedge(d.Hedge),
		Cache:         Cache(d.Cache),
	}
}

// UnmarshalYAML decodes a route over DefaultRoute, so absent keys take their
// defaults and explicit zeros stay zero.
func (r *Route) UnmarshalYAML(unmarshal func(any) error) error {
	type plain Route
	p := plain(DefaultRoute())
	if err := unmarshal(&p); err != nil {
		return err
	}
	*r = Route(p)
	r.decoded = true
	return nil
}

// UnmarshalYAML accepts a target as a string "provider/model" or as an
// object {target: ..., breaker: ..., max_concurrency: ..., retry: ...}.
func (t *Target) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err == nil {
		*t = Target{Target: s}
		return nil
	}
	type plain Target
	var p plain
	if err := unmarshal(&p); err != nil {
		return err
	}
	*t = Target(p)
	return nil
}

// MarshalYAML writes a target without overrides as its string form, and
// one with overrides as an object listing only the fields set.
func (t Target) MarshalYAML() (any, error) {
	if t.Breaker == nil && t.Retry == nil && t.MaxConcurrency == 0 {
		return t.Target, nil
	}
	type plain Target
	b, err := yaml.MarshalWithOptions(plain(t), yaml.OmitZero())
	if err != nil {
		return nil, err
	}
	var m yaml.MapSlice
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// Provider returns the provider part of "provider/model".
func (t Target) Provider() string { p, _, _ := strings.Cut(t.Target, "/"); return p }

// Model returns the model part of "provider/model" ("" when absent); it may
// contain slashes ("openrouter/anthropic/claude-sonnet-4.5").
func (t Target) Model() string { _, m, _ := strings.Cut(t.Target, "/"); return m }

// fillZero replaces zero (and nil) policy fields with their defaults
// (routes built in Go rather than decoded from YAML).
func (r *Route) fillZero() {
	d := DefaultRoute()
	fill(&r.Order, d.Order)
	fill(&r.Timeout, d.Timeout)
	fillPtr(&r.MaxClientWait, d.MaxClientWait)
	fillPtr(&r.RepeatHold, d.RepeatHold)
	fillPtr(&r.Hedge.FirstTokenAfter, d.Hedge.FirstTokenAfter)
	fill(&r.Retry.MaxAttempts, d.Retry.MaxAttempts)
	fill(&r.Retry.MaxTotalAttempts, d.Retry.MaxTotalAttempts)
	fill(&r.Retry.BaseDelay, d.Retry.BaseDelay)
	fill(&r.Retry.MaxDelay, d.Retry.MaxDelay)
	fill(&r.Retry.MaxWait, d.Retry.MaxWait)
	fillPtr(&r.Retry.Budget, d.Retry.Budget)
	fillPtr(&r.Retry.MinRetryConcurrency, d.Retry.MinRetryConcurrency)
	fill(&r.Stream.FirstTokenTimeout, d.Stream.FirstTokenTimeout)
	fill(&r.Stream.IdleTimeout, d.Stream.IdleTimeout)
	fill(&r.Stream.HeaderTimeout, d.Stream.HeaderTimeout)
	fill(&r.Stream.SilentAfter, d.Stream.SilentAfter)
	fillPtr(&r.Breaker.Failures, d.Breaker.Failures)
	fillPtr(&r.Breaker.FailureRatio, d.Breaker.FailureRatio)
	fill(&r.Breaker.MinCalls, d.Breaker.MinCalls)
	fill(&r.Breaker.Window, d.Breaker.Window)
	fill(&r.Breaker.InitialCooldown, d.Breaker.InitialCooldown)
	fill(&r.Breaker.Cooldown, d.Breaker.Cooldown)
	fill(&r.Breaker.Probes, d.Breaker.Probes)
	fill(&r.QueueTimeout, d.QueueTimeout)
	fill(&r.Cache.MaxEntries, d.Cache.MaxEntries)
	fill(&r.Cache.MaxBytes, d.Cache.MaxBytes)
}

// fill sets a zero *p to d.
func fill[T comparable](p *T, d T) {
	var zero T
	if *p == zero {
		*p = d
	}
}

// fillPtr sets a nil or zero *p to d: in a route built in Go a zero is unset.
func fillPtr[T int | float64 | time.Duration](p **T, d *T) {
	if *p == nil || **p == 0 {
		*p = d
	}
}

// Provision completes a configuration in place, without failing (Validate
// reports what is wrong). Load and Parse call it; call it yourself on a
// Config built in Go. It:
//   - gives each provider its type (the key, for known names) and fills an
//     absent api_key, base_url, model and api_version from the provider's
//     environment variables (ANTHROPIC_API_KEY, ..._BASE_URL, ..._MODEL), then
//     from the documented defaults; "none" as api_key means no key;
//   - adds a known provider that a target or default_provider names but the
//     providers key does not list, configured from the environment;
//   - completes a bare provider target ("anthropic") with its default model;
//   - fills zero policy fields of routes built in Go with the defaults;
//   - adds route "default" when absent: over the configured providers'
//     default models, cheapest first (order: cost); with no provider at all,
//     over the providers with keys in the environment, or sim;
//   - sorts the targets of order: cost routes, cheapest first (blended price,
//     unknown prices last, ties in listed order);
//   - registers every secret (see Secrets) with classify.AddSecrets, so that
//     Redact masks them in verdicts, error bodies, alerts and logs.
//
// Provision is idempotent. It is not safe for concurrent use.
func (c *Config) Provision(getenv func(string) string) {
	if c.Providers == nil {
		c.Providers = map[string]*Provider{}
	}
	if c.Routes == nil {
		c.Routes = map[string]*Route{}
	}
	c.State.provision()
	for name, p := range c.Providers {
		if p == nil {
			p = &Provider{}
			c.Providers[name] = p
		}
		p.provision(name, getenv)
	}
	if _, ok := c.Routes["default"]; !ok {
		if len(c.Providers) == 0 {
			for name, p := range envProviders(getenv) {
				c.Providers[name] = p
			}
		}
		c.Routes["default"] = c.defaultRoute()
	}
	if c.DefaultProvider != "" {
		c.implicitProvider(c.DefaultProvider, getenv)
	}
	for name, r := range c.Routes {
		if r == nil {
			d := DefaultRoute()
			r = &d
			r.decoded = true
			c.Routes[name] = r
		}
		if !r.decoded {
			r.fillZero()
		}
		r.Order = strings.ToLower(strings.TrimSpace(r.Order))
		for i := range r.Targets {
			t := &r.Targets[i]
			if t.index == 0 {
				t.index = i + 1
			}
			t.Target = strings.TrimSpace(t.Target)
			prov, model, hasModel := strings.Cut(t.Target, "/")
			prov = strings.TrimSpace(prov)
			if prov == "" {
				continue
			}
			p := c.implicitProvider(prov, getenv)
			if !hasModel && p != nil && p.Model != "" {
				t.Target = prov + "/" + p.Model
			} else if hasModel {
				t.Target = prov + "/" + strings.TrimSpace(model)
			}
		}
	}
	cat := c.Catalog()
	for _, r := range c.Routes {
		if r.Order == "cost" {
			catalog.SortByCost(r.Targets, func(t Target) (catalog.Price, bool) { return cat.Price(t.Provider(), t.Model()) })
		}
	}
	classify.AddSecrets(c.Secrets()...)
}

// defaultRoute builds route "default" over every configured provider's
// default model, cheapest first.
func (c *Config) defaultRoute() *Route {
	r := DefaultRoute()
	r.decoded, r.auto = true, true
	r.Order = "cost"
	names := make([]string, 0, len(c.Providers))
	for name := range c.Providers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if p := c.Providers[name]; p != nil && p.Model != "" {
			r.Targets = append(r.Targets, Target{Target: name + "/" + p.Model})
		}
	}
	return &r
}
