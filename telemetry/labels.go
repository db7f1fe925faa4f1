package telemetry

import (
	"errors"
	"strings"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/resilience"
)

// Fault domains: who is at fault for a failure, a closed set (the
// fault_domain label).
const (
	// DomainCaller: the request itself (invalid, too large, filtered, a
	// model the provider does not have).
	DomainCaller = "caller"
	// DomainPolicy: llmguard's own policy turned a target away or ended
	// the call (breaker open, retry budget, deadline, concurrency cap).
	DomainPolicy = "policy"
	// DomainProvider: the provider or the account refused or failed
	// (rate limit, overload, 5xx, quota, key, permission, an unknown body).
	DomainProvider = "provider"
	// DomainNetwork: no answer came (connection failure, timeout).
	DomainNetwork = "network"
	// DomainGateway: llmguard itself failed (a handler panic, a state store
	// that could not be read).
	DomainGateway = "gateway"
)

// Domain returns the fault domain of a classifier class.
func Domain(c classify.Class) string {
	switch c {
	case classify.InvalidRequest, classify.ContextLengthExceeded, classify.RequestTooLarge,
		classify.ContentFiltered, classify.NotFound:
		return DomainCaller
	case classify.Network, classify.Timeout:
		return DomainNetwork
	default:
		return DomainProvider
	}
}

// Request outcomes (the outcome label of llmguard_requests_total).
const (
	OutcomeSuccess  = "success"  // answered by a target
	OutcomeCached   = "cached"   // answered from the idempotency cache
	OutcomeStatic   = "static"   // the route's labelled canned answer
	OutcomeError    = "error"    // failed: the caller got an error
	OutcomeCanceled = "canceled" // the caller went away first
)

// other stands for any name that is not configured: names a client
// invents never become label values.
const other = "other"

// names is the fixed set of route and target names that may become label
// values. Its zero value admits none. Read-only after newNames, so safe for
// concurrent use.
type names struct {
	routes, targets map[string]bool
	// models maps a configured model name ("claude-sonnet-4-5") to true,
	// providers a configured provider name.
	models, providers map[string]bool
}

func newNames(routes map[string][]string) names {
	n := names{routes: map[string]bool{}, targets: map[string]bool{"static": true},
		models: map[string]bool{}, providers: map[string]bool{}}
	for r, ts := range routes {
		n.routes[r] = true
		for _, t := range ts {
			n.targets[t] = true
			if p, m, ok := strings.Cut(t, "/"); ok {
				n.providers[p], n.models[m] = true, true
			}
		}
	}
	return n
}

// route is a route label: a configured route, a configured target named as
// a route, "" for none, else "other".
func (n names) route(r string) string {
	if r == "" || n.routes[r] || n.targets[r] {
		return r
	}
	return other
}

// target is a target label: a configured target, "static", "" for none,
// else "other".
func (n names) target(t string) string {
	if t == "" || n.targets[t] {
		return t
	}
	return other
}

// genAI returns a target's gen_ai.provider.name and gen_ai.request.model
// label values (both "other" for an unconfigured target).
func (n names) genAI(t string) (prov, model string) {
	if !n.targets[t] {
		return other, other
	}
	p, m, ok := strings.Cut(t, "/")
	if !ok {
		return t, t // "static"
	}
	return p, m
}

// model is a gen_ai.response.model label value: a configured model name,
// else "other" (providers answer with dated names no config lists).
func (n names) model(m string) string {
	if m == "" || n.models[m] {
		return m
	}
	return other
}

// skipReason buckets an engine skip reason (free text) into a closed set.
func skipReason(r string) string {
	switch {
	case strings.Contains(r, "state store"):
		return "state_store"
	case strings.Contains(r, "breaker"):
		return "breaker_open"
	case strings.Contains(r, "retry budget"):
		return "retry_budget"
	case strings.Contains(r, "concurrency"):
		return "concurrency"
	case strings.Contains(r, "max_wait"):
		return "wait_too_long"
	case strings.Contains(r, "time left"), strings.Contains(r, "deadline"):
		return "deadline"
	case strings.Contains(r, "max_total_attempts"):
		return "max_attempts"
	case strings.HasPrefix(r, "pacing"):
		return "pacing"
	case strings.Contains(r, "rate limit"), strings.Contains(r, "cooldown"):
		return "cooldown"
	case r == "":
		return ""
	default:
		return "ineligible"
	}
}

// giveUpReasons are the values giveUpReason returns.
var giveUpReasons = []string{"exhausted", "deadline", "rejected", "no_target", "repeat", "unknown_route", "max_cost", "concurrency", other}

// giveUpReason names how a failed call ended, from its sentinel.
func giveUpReason(err error) string {
	switch {
	case err == nil:
		return other
	case errors.Is(err, resilience.ErrRepeat):
		return "repeat"
	case errors.Is(err, resilience.ErrDeadline):
		return "deadline"
	case errors.Is(err, resilience.ErrRejected):
		return "rejected"
	case errors.Is(err, resilience.ErrNoTarget):
		return "no_target"
	case errors.Is(err, resilience.ErrUnknownRoute):
		return "unknown_route"
	case errors.Is(err, resilience.ErrMaxCost):
		return "max_cost"
	case errors.Is(err, resilience.ErrConcurrencyLimit):
		return "concurrency"
	case errors.Is(err, resilience.ErrExhausted):
		return "exhausted"
	default:
		return other
	}
}
