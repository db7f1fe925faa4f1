package resilience

import "github.com/llmguard/llmguard/provider"

// cannotServe says why target t cannot serve the call at all ("" when it
// can): the walk and hedges pass such a target over with this reason, as a
// skip, before any admission or attempt. A request whose Passthrough.Only
// is set needs an adapter that relays its dialect (the state or feature it
// names lives upstream, in that API).
func (cs *callState) cannotServe(t *targetPlan) string {
	if req := cs.c.Request; req != nil {
		if p := req.Passthrough; p != nil && p.Only != "" && !provider.Relays(t.adapter, p.Dialect) {
			return p.Only + ": only a target that serves " + p.Dialect + " itself can take it (" + t.provider + " would get it translated, without that state)"
		}
	}
	return ""
}
