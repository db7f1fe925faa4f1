package resilience

import (
	"time"

	"github.com/llmguard/llmguard/state"
)

// Breaker transitions. Each is a pure function of a record, a policy and an
// explicit time, reporting whether it changed the record; the engine applies
// them inside state.Store.UpdateBreaker so each is atomic per key.

// breakerState names a record's state, treating "" as closed.
func breakerState(b *state.Breaker) string {
	if b.State == "" {
		return state.Closed
	}
	return b.State
}

// breakerQuiet reports that a record needs no transition for a call at now:
// closed, no cooldown. The engine then admits without writing.
func breakerQuiet(b *state.Breaker, now time.Time) bool {
	return breakerState(b) == state.Closed && !now.Before(b.CooldownUntil)
}

// breakerAllow decides whether a call may start at now. A half-open breaker
// admits at most p.probes calls until they report; probe reports the caller
// was admitted as one. reason says why a call was refused.
func breakerAllow(b *state.Breaker, p breakerPolicy, now time.Time) (ok, probe, changed bool, reason string) {
	if now.Before(b.CooldownUntil) {
		return false, false, false, "rate-limit cooldown"
	}
	switch breakerState(b) {
	case state.Open:
		if now.Before(b.OpenUntil) {
			return false, false, false, "breaker open"
		}
		b.State = state.HalfOpen
		b.Probes = 0
		b.Generation++
		changed = true
		fallthrough
	case state.HalfOpen:
		if b.Probes >= p.probes {
			return false, false, changed, "breaker half-open, probes in flight"
		}
		b.Probes++
		return true, true, true, ""
	}
	return true, false, changed, ""
}

// refusedUntil is until when breakerAllow refuses calls at now: the end of
// a rate-limit cooldown (rateLimited), else an open breaker's OpenUntil;
// zero when unknown (half-open with its probes in flight) or not refused.
func refusedUntil(b *state.Breaker, now time.Time) (until time.Time, rateLimited bool) {
	if now.Before(b.CooldownUntil) {
		return b.CooldownUntil, true
	}
	if breakerState(b) == state.Open && now.Before(b.OpenUntil) {
		return b.OpenUntil, false
	}
	return time.Time{}, false
}

// rollWindow starts a new ratio window when the current one is over.
func rollWindow(b *state.Breaker, p breakerPolicy, now time.Time) {
	if b.WindowStart.IsZero() || now.Sub(b.WindowStart) >= p.window {
		b.WindowStart = now
		b.WindowCalls = 0
		b.WindowFailures = 0
	}
}

func tripOpen(b *state.Breaker, until time.Time, reason string) {
	b.State = state.Open
	b.OpenUntil = until
	b.Probes = 0
	b.Failures = 0
	b.WindowStart = time.Time{}
	b.WindowCalls = 0
	b.WindowFailures = 0
	b.Reason = reason
	b.Fault = state.Fault{}
	b.Generation++
}

// breakerSuccess records a success: a half-open breaker closes; a closed one
// resets its run of failures.
func breakerSuccess(b *state.Breaker, p breakerPolicy, now time.Time) bool {
	switch breakerState(b) {
	case state.HalfOpen:
		b.State = state.Closed
		b.Probes = 0
		b.Failures = 0
		b.OpenUntil = time.Time{}
		b.WindowStart = time.Time{}
		b.WindowCalls = 0
		b.WindowFailures = 0
		b.Reason = ""
		b.Fault = state.Fault{}
		b.Generation++
		return true
	case state.Closed:
		changed := false
		if b.Failures != 0 {
			b.Failures = 0
			changed = true
		}
		if p.ratio > 0 {
			rollWindow(b, p, now)
			b.WindowCalls++
			changed = true
		}
		return changed
	}
	return false // open: a late success from before it opened
}

// breakerFailure records an ill-health failure: a half-open breaker reopens;
// a closed one opens after p.failures in a row or a failure ratio of at
// least p.ratio over p.window (with at least p.minCalls calls).
func breakerFailure(b *state.Breaker, p breakerPolicy, now time.Time, reason string) bool {
	switch breakerState(b) {
	case state.HalfOpen:
		tripOpen(b, now.Add(p.cooldown), reason)
		return true
	case state.Closed:
		b.Failures++
		rollWindow(b, p, now)
		b.WindowCalls++
		b.WindowFailures++
		if b.Failures >= p.failures ||
			(p.ratio > 0 && b.WindowCalls >= p.minCalls && float64(b.WindowFailures) >= p.ratio*float64(b.WindowCalls)) {
			tripOpen(b, now.Add(p.cooldown), reason)
		}
		return true
	}
	return false
}

// breakerOpenUntil opens the breaker at once until until (a key-wide quota
// reset, or now+cooldown), keeping a later OpenUntil already set.
func breakerOpenUntil(b *state.Breaker, until time.Time, reason string) bool {
	if breakerState(b) == state.Open && !b.OpenUntil.Before(until) {
		return false
	}
	tripOpen(b, until, reason)
	return true
}

// breakerCooldown makes callers skip the target until until without counting
// ill health (a rate-limit wait).
func breakerCooldown(b *state.Breaker, until time.Time) bool {
	if !until.After(b.CooldownUntil) {
		return false
	}
	b.CooldownUntil = until
	return true
}

// breakerRelease returns a half-open probe slot without an outcome (a
// request-scope failure, a cancelled call).
func breakerRelease(b *state.Breaker) bool {
	if breakerState(b) == state.HalfOpen && b.Probes > 0 {
		b.Probes--
		return true
	}
	return false
}
