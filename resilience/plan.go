package resilience

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/provider"
)

// The plan decides which targets a call may go to, in which order, under
// which resolved policies: a configured route's plan is built by New; a
// call that names a "provider/model" or brings its own Fallbacks gets a plan
// of its own, memoised and bounded (clients may name anything).

// targetPlan is one target of a route with its resolved policies.
type targetPlan struct {
	name        string // provider/model
	breakerKey  string // the target's breaker key in the Store
	keyKey      string // its provider key's breaker key in the Store
	keyLabel    string // "key <provider>", for events
	provider    string
	model       string
	adapter     provider.Adapter
	retry       retryPolicy
	breaker     breakerPolicy
	rt          *targetRuntime
	price       catalog.Price // known when priced
	priced      bool
	info        catalog.Model // what the catalogue knows of the model
	contextSize int           // info.ContextWindow (0 = unknown)
}

// routePlan is a route with resolved policies and its targets in order.
type routePlan struct {
	routePolicy
	name        string
	targets     []*targetPlan
	maxTotal    int
	route       Route // as given, the base of the plans of calls with Fallbacks
	targetNames []string
	repeat      repeatGate // held failures (see repeat.go)
}

// newRoutePlan resolves route r: its targets, then extra (a call's named
// target and Fallbacks), duplicates dropped. ByCost sorts only the route's
// own targets; extra follows them in the order given.
func (e *Engine) newRoutePlan(name string, r *Route, extra []Target) (*routePlan, error) {
	rp := &routePlan{routePolicy: resolveRoute(r), name: name, route: *r}
	rp.maxTotal = rp.retry.maxTotal
	all := make([]Target, 0, len(r.Targets)+len(extra))
	all = append(all, r.Targets...)
	all = append(all, extra...)
	seen := make(map[string]bool, len(all))
	own := 0 // how many of rp.targets come from r.Targets
	for i, rt := range all {
		prov, model, ok := catalog.SplitTarget(rt.Name)
		if !ok {
			return nil, fmt.Errorf("route %q: targets[%d]: %q is not provider/model", name, i, rt.Name)
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
			name:       tname,
			breakerKey: targetKey(tname),
			keyKey:     keyKey(prov),
			keyLabel:   "key " + prov,
			provider:   prov,
			model:      model,
			adapter:    ad,
			retry:      resolveRetry(new(r.Retry.Merge(rt.Retry))),
			breaker:    resolveBreaker(new(r.Breaker.Merge(rt.Breaker))),
			info:       e.cat.Model(prov, model),
		}
		tp.price, tp.priced = e.cat.Price(prov, model)
		tp.contextSize = tp.info.ContextWindow
		tp.rt = e.runtime(tname, concurrencyOf(r, &rt))
		rp.targets = append(rp.targets, tp)
		if i < len(r.Targets) {
			own++
		}
	}
	if r.ByCost {
		catalog.SortByCost(rp.targets[:own], func(t *targetPlan) (catalog.Price, bool) { return t.price, t.priced })
	}
	for _, t := range rp.targets {
		rp.targetNames = append(rp.targetNames, t.name)
	}
	return rp, nil
}

// concurrencyOf is the concurrency cap t has on route r.
func concurrencyOf(r *Route, t *Target) int {
	if t.MaxConcurrency != 0 {
		return t.MaxConcurrency
	}
	return r.MaxConcurrency
}

// targetLimits returns the concurrency limit of every target a configured
// route lists. A listing's limit is the target's own max_concurrency, else
// its route's; a target's limit is the smallest non-zero limit among its
// listings (0, unlimited, sets no limit and so never lifts another route's).
// Routes that give a target different non-zero limits are logged, once per
// target, naming the limit kept. names are the routes' names, sorted.
func targetLimits(routes map[string]Route, names []string, log *slog.Logger) map[string]int {
	limits := make(map[string]int)
	var conflicts map[string]bool
	for _, rn := range names {
		r := routes[rn]
		for _, rt := range r.Targets {
			prov, model, ok := catalog.SplitTarget(rt.Name)
			if !ok {
				continue // newRoutePlan reports it
			}
			name := prov + "/" + model
			maxc := concurrencyOf(&r, &rt)
			cur, seen := limits[name]
			switch {
			case !seen || cur == 0:
				limits[name] = max(maxc, 0)
			case maxc > 0 && maxc != cur:
				if conflicts == nil {
					conflicts = make(map[string]bool)
				}
				conflicts[name] = true
				limits[name] = min(cur, maxc)
			}
		}
	}
	cs := make([]string, 0, len(conflicts))
	for name := range conflicts {
		cs = append(cs, name)
	}
	sort.Strings(cs)
	for _, name := range cs {
		log.Warn("llmguard: routes give a target different max_concurrency; the smallest applies to every route",
			"target", name, "max_concurrency", limits[name])
	}
	return limits
}

// Bounds on the state for targets a client invents (a "provider/model"
// route or per-call Fallbacks naming targets no configured route lists).
const (
	// maxRuntimes bounds the targets whose statistics the engine keeps.
	maxRuntimes = 4096
	// maxPlans bounds the memoised route plans of calls that name targets.
	maxPlans = 1024
	// inventedTTL is how long an unused invented target's state is kept.
	inventedTTL = 30 * time.Minute
	// maxTargetName bounds a route or target name a call may give; longer
	// ones are refused before any state is built for them.
	maxTargetName = 512
	// maxPlanKey bounds the memo key of a plan (its name and fallbacks); a
	// longer plan is built for its call and not kept.
	maxPlanKey = 4096
)

// memoPlan is a memoised route plan of a call that names targets.
type memoPlan struct {
	rp   *routePlan
	used atomic.Int64 // Unix ns
}

// checkNames refuses a call whose route (unless configured) or fallbacks
// name something longer than maxTargetName.
func checkNames(name string, configured bool, fallbacks []string) error {
	for i, n := range append([]string{name}, fallbacks...) {
		if len(n) > maxTargetName && (i > 0 || !configured) {
			return &RouteError{Route: shortName(name), Err: fmt.Errorf("%w: %q is longer than %d bytes",
				ErrUnknownRoute, shortName(n), maxTargetName)}
		}
	}
	return nil
}

// shortName cuts a client-given name to 64 bytes (on a rune boundary) for
// an error line.
func shortName(s string) string {
	if len(s) <= 64 {
		return s
	}
	return strings.ToValidUTF8(s[:64], "") + "…"
}

// plan returns the route plan for a call: a named route, or a single
// "provider/model" (or bare model with a default provider) under the default
// route's policies, with the call's Fallbacks appended.
func (e *Engine) plan(c *Call) (*routePlan, error) {
	name := c.Route
	if name == "" {
		name = "default"
	}
	rp, ok := e.routes[name]
	if err := checkNames(name, ok, c.Fallbacks); err != nil {
		return nil, err
	}
	if ok && len(c.Fallbacks) == 0 {
		return rp, nil
	}
	var base Route
	var targets []Target
	if ok {
		base = rp.route
	} else {
		target := name
		if !strings.Contains(name, "/") {
			if e.cat.DefaultProvider == "" || c.Route == "" {
				return nil, &RouteError{Route: name, Err: ErrUnknownRoute}
			}
			target = e.cat.DefaultProvider + "/" + name
		}
		base = e.defaultRoute
		base.Targets = nil
		targets = []Target{{Name: target}}
	}
	for _, f := range c.Fallbacks {
		targets = append(targets, Target{Name: f})
	}
	key := name + "\x00" + strings.Join(c.Fallbacks, "\x00")
	now := time.Now()
	e.mu.Lock()
	m, ok := e.dynamic[key]
	e.mu.Unlock()
	if ok {
		m.used.Store(now.UnixNano())
		touch(m.rp, now.UnixNano())
		return m.rp, nil
	}
	rp, err := e.newRoutePlan(name, &base, targets)
	if err != nil {
		return nil, &RouteError{Route: name, Err: fmt.Errorf("%w: %v", ErrUnknownRoute, err)}
	}
	touch(rp, now.UnixNano())
	if len(key) > maxPlanKey {
		return rp, nil // built for this call only
	}
	m = &memoPlan{rp: rp}
	m.used.Store(now.UnixNano())
	e.mu.Lock()
	if len(e.dynamic) >= maxPlans {
		e.sweepLocked(now)
	}
	if len(e.dynamic) < maxPlans { // beyond the bound plans are rebuilt per call
		e.dynamic[key] = m
	}
	e.mu.Unlock()
	return rp, nil
}

// touch marks every target of a plan used at now.
func touch(rp *routePlan, now int64) {
	for _, t := range rp.targets {
		t.rt.used.Store(now)
	}
}
