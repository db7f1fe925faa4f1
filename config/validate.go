package config

import (
	"fmt"
	"math"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/llmguard/llmguard/catalog"
)

// validator collects one-line errors with field paths and positions.
type validator struct {
	c *Config
	// reported: implicit providers whose problem was already reported at
	// an earlier target, so it is said once.
	reported map[string]bool
	errs     []error // each a *FieldError
}

func (v *validator) add(path, format string, args ...any) {
	e := &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)}
	if v.c.Source != SourceEnvironment {
		e.File = v.c.Source
	}
	// Point at the field itself, or at its closest ancestor in the file.
	for p := path; p != ""; p = parentPath(p) {
		if pos, ok := v.c.positions[p]; ok {
			e.Line, e.Column = pos.line, pos.col
			break
		}
	}
	v.errs = append(v.errs, e)
}

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i <= 0 {
		return ""
	}
	return p[:i]
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Validate checks a provisioned configuration and returns every problem as
// a *FieldError (one line each, with the field path and, for a file, its
// line and column), joined with errors.Join; nil when the config is usable.
// It never includes a key in a message. Safe for concurrent use.
func (c *Config) Validate() error {
	v := &validator{c: c}
	v.providers()
	v.routes()
	v.overrides()
	v.mcpUpstreams()
	v.state()
	if u := c.Alerts.WebhookURL; u != "" {
		if msg := checkURL(u); msg != "" {
			v.add("alerts.webhook_url", "%s", msg)
		}
	}
	if d := c.Routes["default"]; d != nil && d.auto && len(d.Targets) == 0 && len(v.errs) == 0 {
		v.add("routes.default", "missing, and no configured provider to build it from")
	}
	return joinInFileOrder(v.errs)
}

// providers checks the providers key and default_provider.
func (v *validator) providers() {
	c := v.c
	for _, name := range sortedKeys(c.Providers) {
		if strings.ContainsAny(name, "/ \t") || name == "" {
			v.add("providers."+name, "a provider name must be non-empty, without '/' or spaces")
			continue
		}
		if !c.implicit[name] {
			v.provider("providers."+name, name, c.Providers[name])
		}
	}
	if c.DefaultProvider != "" {
		if _, ok := c.Providers[c.DefaultProvider]; !ok {
			v.add("default_provider", "unknown provider %q (%s)", c.DefaultProvider, c.knownList())
		} else if c.implicit[c.DefaultProvider] {
			v.implicitKey("default_provider", c.DefaultProvider)
		}
	}
}

// routes checks the routes key: route "default" and every route.
func (v *validator) routes() {
	c := v.c
	if len(c.Routes) == 0 || c.Routes["default"] == nil {
		v.add("routes.default", "missing")
	}
	for _, name := range sortedKeys(c.Routes) {
		if strings.Contains(name, "/") || name == "" {
			v.add("routes."+name, "a route name must be non-empty and without '/' (provider/model names a target)")
		}
		if r := c.Routes[name]; r != nil {
			v.route("routes."+name, r)
		}
	}
}

// overrides checks the pricing and models keys.
func (v *validator) overrides() {
	c := v.c
	for _, k := range sortedKeys(c.Pricing) {
		if p := c.Pricing[k]; p.In < 0 || p.Out < 0 {
			v.add("pricing."+k, "prices must not be negative")
		}
	}
	for _, k := range sortedKeys(c.Models) {
		m := c.Models[k]
		if m.ContextWindow < 0 {
			v.add("models."+k+".context_window", "must not be negative")
		}
		if m.Dimensions < 0 {
			v.add("models."+k+".dimensions", "must not be negative")
		}
		if m.MinDimensions < 0 || (m.MinDimensions > 0 && m.MinDimensions > m.Dimensions) {
			v.add("models."+k+".min_dimensions", "must be between 0 and dimensions")
		}
	}
}

func (c *Config) knownList() string {
	seen := map[string]bool{}
	var names []string
	for _, n := range sortedKeys(c.Providers) {
		if !c.implicit[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, n := range catalog.KnownProviderNames() {
		if !seen[n] && n != "openai-compatible" {
			names = append(names, n)
		}
	}
	return "known: " + strings.Join(names, ", ")
}

// keyHint says which variable to set for a provider's key.
func (c *Config) keyHint(path string, p *Provider, info catalog.Provider) string {
	if vars := c.unsetVars[path+".api_key"]; len(vars) > 0 {
		return fmt.Sprintf("${%s} is not set", vars[0])
	}
	if len(info.KeyEnv) > 0 {
		return "set " + strings.Join(info.KeyEnv, " or ")
	}
	return "set api_key"
}

func (v *validator) provider(path, name string, p *Provider) {
	if p == nil { // a Config built in Go and never provisioned
		p = &Provider{}
	}
	if p.Type == "" {
		v.add(path, "unknown provider %q: set type to one of %s", name, strings.Join(catalog.KnownProviderNames(), ", "))
		return
	}
	info, ok := catalog.KnownProvider(p.Type)
	if !ok {
		v.add(path+".type", "unknown provider type %q (known: %s)", p.Type, strings.Join(catalog.KnownProviderNames(), ", "))
		return
	}
	switch {
	case p.APIKey == "" && !info.KeyOptional:
		v.add(path+".api_key", "no API key (%s)", v.c.keyHint(path, p, info))
	case p.APIKey != "" && strings.ContainsAny(p.APIKey, " \t\r\n\"'`"):
		v.add(path+".api_key", "the key contains whitespace or quotes; paste it again without them")
	}
	if p.BaseURL == "" && info.Dialect != catalog.DialectSim {
		hint := "set base_url"
		if info.BaseURLEnv != "" {
			hint = "set " + info.BaseURLEnv + " or base_url"
		}
		v.add(path+".base_url", "required (%s)", hint)
	} else if p.BaseURL != "" {
		if msg := checkURL(p.BaseURL); msg != "" {
			v.add(path+".base_url", "%s", msg)
		} else if u, _ := url.Parse(p.BaseURL); u.RawQuery != "" || u.Fragment != "" {
			v.add(path+".base_url", "must not have a query or fragment")
		}
	}
	if info.Dialect == catalog.DialectAzure && p.Model == "" {
		v.add(path+".model", "required: the Azure deployment name (set %s or model)", info.ModelEnv)
	}
}

func (v *validator) implicitKey(path, name string) {
	if v.reported[name] {
		return
	}
	if v.reported == nil {
		v.reported = map[string]bool{}
	}
	v.reported[name] = true
	p := v.c.Providers[name]
	info, _ := catalog.KnownProvider(p.Type)
	if p.APIKey == "" && !info.KeyOptional {
		v.add(path, "provider %q has no API key (%s, or add it under providers)", name, v.c.keyHint("", p, info))
	}
	if p.BaseURL == "" && info.Dialect != catalog.DialectSim {
		v.add(path, "provider %q has no base URL (set %s, or add it under providers)", name, info.BaseURLEnv)
	} else if info.Dialect == catalog.DialectAzure && p.Model == "" {
		v.add(path, "provider %q has no deployment (set %s, or add it under providers)", name, info.ModelEnv)
	}
}

func checkURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "not an http(s) URL with a host"
	}
	return ""
}

func (v *validator) route(path string, r *Route) {
	switch r.Order {
	case "", "priority", "cost":
	default:
		v.add(path+".order", "must be priority or cost, not %q", r.Order)
	}
	if len(r.Targets) == 0 && !r.auto {
		v.add(path+".targets", "no targets")
	}
	v.positive(path+".timeout", r.Timeout)
	v.nonNeg(path+".max_client_wait", deref(r.MaxClientWait))
	v.nonNeg(path+".repeat_hold", deref(r.RepeatHold))
	v.retry(path+".retry", r.Retry)
	v.nonNeg(path+".stream.first_token_timeout", r.Stream.FirstTokenTimeout)
	v.nonNeg(path+".stream.idle_timeout", r.Stream.IdleTimeout)
	v.nonNeg(path+".stream.header_timeout", r.Stream.HeaderTimeout)
	v.nonNeg(path+".stream.silent_after", r.Stream.SilentAfter)
	v.breaker(path+".breaker", r.Breaker)
	v.nonNegInt(path+".max_concurrency", r.MaxConcurrency)
	v.nonNegInt(path+".max_idle_conns", r.MaxIdleConns)
	v.nonNeg(path+".queue_timeout", r.QueueTimeout)
	v.nonNeg(path+".hedge_after", r.HedgeAfter)
	v.nonNeg(path+".hedge.first_token_after", deref(r.Hedge.FirstTokenAfter))
	if r.MaxCostUSD < 0 || math.IsNaN(r.MaxCostUSD) || math.IsInf(r.MaxCostUSD, 0) {
		v.add(path+".max_cost_usd", "must be a dollar amount ≥ 0, not %v", r.MaxCostUSD)
	}
	v.nonNeg(path+".cache.ttl", r.Cache.TTL)
	if r.Cache.MaxEntries < 0 {
		v.add(path+".cache.max_entries", "must not be negative")
	}
	if r.Cache.MaxBytes < 0 {
		v.add(path+".cache.max_bytes", "must not be negative")
	}
	seen := map[string]string{}
	for i, t := range r.Targets {
		idx := i
		if t.index > 0 {
			idx = t.index - 1
		}
		tp := fmt.Sprintf("%s.targets[%d]", path, idx)
		if t.Target == catalog.SamplingTarget {
			if first, dup := seen[t.Target]; dup {
				v.add(tp, "duplicate target %q (also %s)", t.Target, first)
			}
			seen[t.Target] = tp
			continue
		}
		prov, model, ok := catalog.SplitTarget(t.Target)
		if !ok {
			if t.Target == "" {
				v.add(tp, "empty target (want provider/model)")
			} else if _, known := v.c.Providers[prov]; known || prov == "" {
				v.add(tp, "%q is not provider/model and the provider has no default model", t.Target)
			} else {
				v.add(tp, "unknown provider %q (%s)", prov, v.c.knownList())
			}
			continue
		}
		if _, known := v.c.Providers[prov]; !known {
			v.add(tp, "unknown provider %q (%s)", prov, v.c.knownList())
			continue
		}
		if v.c.implicit[prov] {
			v.implicitKey(tp, prov)
		}
		if first, dup := seen[t.Target]; dup {
			v.add(tp, "duplicate target %q (also %s)", t.Target, first)
		} else {
			seen[t.Target] = tp
		}
		_ = model
		v.nonNegInt(tp+".max_concurrency", t.MaxConcurrency)
		v.nonNegInt(tp+".max_idle_conns", t.MaxIdleConns)
		pol := r.TargetPolicy(i)
		if t.Retry != nil {
			v.retry(tp+".retry", pol.Retry)
		}
		if t.Breaker != nil {
			v.breaker(tp+".breaker", pol.Breaker)
		}
	}
}

func (v *validator) positive(path string, d time.Duration) {
	if d <= 0 {
		v.add(path, "must be positive")
	}
}

func (v *validator) nonNegInt(path string, n int) {
	if n < 0 {
		v.add(path, "must not be negative")
	}
}

func (v *validator) nonNeg(path string, d time.Duration) {
	if d < 0 {
		v.add(path, "must not be negative")
	}
}

func (v *validator) retry(path string, r Retry) {
	if r.MaxAttempts < 1 {
		v.add(path+".max_attempts", "must be at least 1 (the first attempt counts)")
	}
	if r.MaxTotalAttempts < 1 {
		v.add(path+".max_total_attempts", "must be at least 1")
	}
	v.nonNeg(path+".base_delay", r.BaseDelay)
	v.nonNeg(path+".max_delay", r.MaxDelay)
	if r.MaxDelay < r.BaseDelay {
		v.add(path+".max_delay", "must not be below base_delay (%s)", r.BaseDelay)
	}
	v.nonNeg(path+".max_wait", r.MaxWait)
	if b := deref(r.Budget); b < 0 || b > 1 {
		v.add(path+".budget", "must be in [0,1]")
	}
	if deref(r.MinRetryConcurrency) < 0 {
		v.add(path+".min_retry_concurrency", "must not be negative")
	}
}

func (v *validator) breaker(path string, b Breaker) {
	if deref(b.Failures) < 0 {
		v.add(path+".failures", "must not be negative (0 = no floor)")
	}
	if r := deref(b.FailureRatio); r < 0 || r > 1 {
		v.add(path+".failure_ratio", "must be in [0,1]")
	}
	if b.MinCalls < 0 {
		v.add(path+".min_calls", "must not be negative")
	}
	if deref(b.FailureRatio) > 0 {
		v.positive(path+".window", b.Window)
	}
	v.positive(path+".initial_cooldown", b.InitialCooldown)
	v.positive(path+".cooldown", b.Cooldown)
	if b.Probes < 1 {
		v.add(path+".probes", "must be at least 1")
	}
}

// deref is *p, or zero for nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
