package resilience

import (
	"errors"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
)

// ErrUnservable is wrapped by the RouteError of a call that no target of its
// route can serve at all (each was skipped with the reason): an embeddings
// call on a route with no embedding target, a request only a relaying
// target can take on a route with none. It is the request's fault, not an
// outage: no retry or wait helps.
var ErrUnservable = errors.New("no target can serve this call")

// unservable reports whether no target of the route can serve the call,
// recording each one's reason as a skip when so.
func (cs *callState) unservable() bool {
	for _, t := range cs.rp.targets {
		if cs.cannotServe(t) == "" {
			return false
		}
	}
	for _, t := range cs.rp.targets {
		cs.skip(t, cs.cannotServe(t))
	}
	return len(cs.rp.targets) > 0
}

// cannotServe says why target t cannot serve the call at all ("" when it
// can): the walk and hedges pass such a target over with this reason, as a
// skip, before any admission or attempt. An embeddings call needs an
// Embedder giving vectors of the call's size (see Engine.Embed). A request
// whose Passthrough.Only
// is set needs an adapter that relays its dialect (the state or feature it
// names lives upstream, in that API).
func (cs *callState) cannotServe(t *targetPlan) string {
	if cs.emb != nil {
		return cs.cannotServeEmbed(t)
	}
	if req := cs.c.Request; req != nil {
		if p := req.Passthrough; p != nil && p.Only != "" && !provider.Relays(t.adapter, p.Dialect) {
			return p.Only + ": only a target that serves " + p.Dialect + " itself can take it (" + t.provider + " would get it translated, without that state)"
		}
	}
	return ""
}

// fallbackOK says whether, after failure pe on from, the call may move to to.
// stop means no later target can be eligible either.
func (cs *callState) fallbackOK(pe *provider.Error, from, to *targetPlan) (ok, stop bool, reason string) {
	v := &pe.Verdict
	if why := cs.windowRefusal(pe, from, to); why != "" {
		return false, false, why
	}
	switch v.Class {
	case classify.InvalidRequest:
		return false, true, "invalid_request never falls back"
	case classify.ContextLengthExceeded:
		return true, false, "" // to's window is unknown or larger (windowRefusal)
	case classify.ContentFiltered:
		if !cs.rp.fallbackOnFilter {
			return false, true, "content_filtered: route does not fall back"
		}
		return true, false, ""
	}
	if pe.AfterFirstToken {
		return false, true, "stream failed after its first token"
	}
	if !v.Fallback {
		return false, true, string(v.Class) + " does not fall back"
	}
	return true, false, ""
}
