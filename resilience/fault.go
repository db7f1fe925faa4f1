package resilience

import (
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state"
)

// Key faults: a terminal failure that blames the key or the account (an
// invalid key, no credit, billing) opens the key's breaker and is kept in
// its record (state.Breaker.Fault), so that calls refused while it is open
// are told that failure, as first seen, instead of an outage.

// keyFault is the record of a key-scope failure seen at now, or the zero
// Fault when the failure may pass by itself.
func keyFault(v *classify.Verdict, now time.Time) state.Fault {
	if v.Scope != classify.ScopeKey || !terminal(v) {
		return state.Fault{}
	}
	return state.Fault{Status: v.Status, Class: string(v.Class), ProviderType: v.ProviderType,
		RequestID: v.RequestID, Message: v.Message, Since: now, Until: v.Until}
}

// keepFault stores f in b (prev being b's fault before the transition that
// reopened it), keeping when the same failure was first seen. It reports
// whether it changed b.
func keepFault(b *state.Breaker, prev, f state.Fault) bool {
	if f == (state.Fault{}) {
		return false
	}
	if prev.Status == f.Status && prev.Class == f.Class && !prev.Since.IsZero() {
		f.Since = prev.Since
	}
	if b.Fault == f {
		return false
	}
	b.Fault = f
	return true
}

// faultError is a stored fault as the failure of target t, with when it
// was first seen; nil for the zero Fault.
func faultError(t *targetPlan, f state.Fault) (*provider.Error, time.Time) {
	if f == (state.Fault{}) {
		return nil, time.Time{}
	}
	return &provider.Error{Provider: t.provider, Model: t.model, Verdict: classify.Verdict{
		Status: f.Status, Class: classify.Class(f.Class), Scope: classify.ScopeKey, Fallback: true,
		ProviderType: f.ProviderType, RequestID: f.RequestID, Message: f.Message, Until: f.Until,
	}}, f.Since
}
