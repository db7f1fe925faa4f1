package resilience

import (
	"context"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state"
)

// The outcome: what an attempt, a skip or a refusal leaves behind. On the
// call (its RouteError's attempts and skips, RetryAt, what it may wait
// for), and on the engine: the breakers by the verdict's scope and the
// target's statistics.

// record keeps a finished attempt's failure for the call's RouteError. The
// walker calls it, for its own attempts and for its hedge's.
func (cs *callState) record(r *attemptResult) {
	cs.noteOverflow(r)
	if r.failure != nil && r.listed {
		cs.attempts = append(cs.attempts, AttemptError{Target: r.target.name, Err: r.failure})
	}
}

// noteRetryAt keeps t as the call's RetryAt when it comes first.
func (cs *callState) noteRetryAt(t time.Time) {
	if t.IsZero() {
		return
	}
	if cs.retryAt.IsZero() || t.Before(cs.retryAt) {
		cs.retryAt = t
	}
}

// skip records a target the call passed over, and why.
func (cs *callState) skip(t *targetPlan, reason string) {
	cs.refused(t, refusal{reason: reason})
}

// refused records a target the call did not try; a refusal that ends at a
// known time counts towards the call's RetryAt, and one the call may wait
// for within the target's max_wait towards its holdAt.
// A key fault's breaker ends only when the key is tried again: that
// counts only when the provider said when the fault ends (a quota reset).
func (cs *callState) refused(t *targetPlan, r refusal) {
	if r.fault == nil || !r.fault.Verdict.Until.IsZero() {
		cs.noteRetryAt(r.until)
	}
	cs.skipped = append(cs.skipped, Skip{Target: t.name, Reason: r.reason, Until: r.until, RateLimited: r.rateLimited,
		Fault: r.fault, Since: r.since, Ineligible: r.ineligible})
	if r.hold && !r.until.IsZero() && time.Until(r.until) <= t.retry.maxWait &&
		(cs.holdAt.IsZero() || r.until.Before(cs.holdAt)) {
		cs.holdAt = r.until
	}
	cs.emit(Event{Kind: EventSkip, Target: t.name, Reason: r.reason})
}

func verdictOf(pe *provider.Error) *classify.Verdict {
	if pe == nil {
		return nil
	}
	v := pe.Verdict
	return &v
}

// retryAtOf is when the server said to come back: a quota reset, or now+Wait.
func retryAtOf(now time.Time, v *classify.Verdict) time.Time {
	if !v.Until.IsZero() {
		return v.Until
	}
	if v.Wait > 0 {
		return now.Add(v.Wait)
	}
	return time.Time{}
}

func (cs *callState) breakerEvent(target, from, to, reason string) {
	if from != to {
		cs.emit(Event{Kind: EventBreaker, Target: target, From: from, To: to, Reason: reason})
	}
}

// storeCtx is the context for breaker updates after an attempt: the
// outcome must be recorded even when the caller has gone.
func storeCtx() context.Context { return context.Background() }

// update applies fn to the breaker at key and reports a change of state:
// to cs's events, or (cs nil: a stream that failed after its call returned)
// to the engine's hook under route.
func (e *Engine) update(cs *callState, t *targetPlan, key, label, route string, fn func(b *state.Breaker) bool) {
	var states [2]string // from, to: one allocation for the closure to fill
	_, err := e.store.UpdateBreaker(storeCtx(), key, func(b *state.Breaker) bool {
		states[0] = breakerState(b)
		ch := fn(b)
		states[1] = breakerState(b)
		return ch
	})
	if err != nil {
		e.log.Warn("llmguard: breaker update failed", "key", key, "err", err)
		return
	}
	from, to := states[0], states[1]
	if cs != nil {
		cs.breakerEvent(t.name, from, to, label)
	} else if from != to && e.onEvent != nil {
		e.onEvent(Event{Kind: EventBreaker, Time: time.Now(), Route: route, Target: t.name, From: from, To: to, Reason: label})
	}
}

// succeeded records a success: in the target's window (which ends a
// rate-limit cooldown), and as the probe's verdict where the call was one.
// The key's breaker only learns of a probe: a key is judged by key-scope
// verdicts alone.
func (e *Engine) succeeded(cs *callState, t *targetPlan, g grant) {
	t.rt.successes.Add(1)
	now := time.Now()
	if g.keyProbe {
		e.update(cs, t, t.keyKey, t.keyLabel, "", func(b *state.Breaker) bool {
			return breakerSuccess(b, t.breaker, now, b.Generation == g.keyGen)
		})
	}
	if g.quiet {
		// Not a probe, and the record was quiet: the success only counts
		// in the window, which need not hold up the call.
		count := func(b *state.Breaker) bool { return breakerSuccess(b, t.breaker, now, false) }
		if _, ok := e.store.(state.Pipelined); ok {
			e.updateLater(cs, t, t.breakerKey, count)
			return
		}
		// A success that is no probe never changes the breaker's state:
		// there is no transition to report (update's from and to).
		if _, err := e.store.UpdateBreaker(storeCtx(), t.breakerKey, count); err != nil {
			e.log.Warn("llmguard: breaker update failed", "key", t.breakerKey, "err", err)
		}
		return
	}
	e.update(cs, t, t.breakerKey, "", "", func(b *state.Breaker) bool {
		return breakerSuccess(b, t.breaker, now, g.targetProbe && b.Generation == g.targetGen)
	})
}

// failed records a failure on the breaker its verdict names. Only auth,
// quota and billing verdicts (scope key) reach the key's breaker, which
// opens at once; a target's ill health, transport failures included (a
// reset, an EOF, an HTML 5xx page from a proxy, a truncated body, a
// timeout: scope model or provider), counts in the target's window; a
// rate limit is not ill health. route names the route for events when cs
// is nil (a stream that failed after the call returned).
func (e *Engine) failed(cs *callState, t *targetPlan, g grant, pe *provider.Error, route string) {
	v := &pe.Verdict
	now := time.Now()
	t.rt.failures.Add(1)
	t.rt.mu.Lock()
	t.rt.lastErr, t.rt.lastFailed = pe.Error(), now
	t.rt.mu.Unlock()
	keyProbe := func(b *state.Breaker) bool { return g.keyProbe && b.Generation == g.keyGen }
	targetProbe := func(b *state.Breaker) bool { return g.targetProbe && b.Generation == g.targetGen }
	reason := pe.Error()
	switch {
	case v.Class == classify.RateLimited && v.Scope == classify.ScopeKey:
		e.release(t, grant{targetProbe: g.targetProbe, targetGen: g.targetGen})
		e.update(cs, t, t.keyKey, t.keyLabel, route, func(b *state.Breaker) bool {
			ch := breakerRateLimited(b, t.breaker, now, v.Wait, keyProbe(b))
			return breakerServerWait(b, retryAtOf(now, v), e.id) || ch
		})
	case v.Class == classify.RateLimited:
		e.release(t, grant{keyProbe: g.keyProbe, keyGen: g.keyGen})
		e.update(cs, t, t.breakerKey, "", route, func(b *state.Breaker) bool {
			ch := breakerRateLimited(b, t.breaker, now, v.Wait, targetProbe(b))
			return breakerServerWait(b, retryAtOf(now, v), e.id) || ch
		})
	case v.Scope == classify.ScopeKey:
		e.release(t, grant{targetProbe: g.targetProbe, targetGen: g.targetGen})
		f := keyFault(v, now)
		e.update(cs, t, t.keyKey, t.keyLabel, route, func(b *state.Breaker) bool {
			prev := b.Fault
			ch := breakerOpenKey(b, t.breaker, now, v.Until, reason)
			return keepFault(b, prev, f) || ch
		})
	case v.Scope == classify.ScopeModel || v.Scope == classify.ScopeProvider:
		e.release(t, grant{keyProbe: g.keyProbe, keyGen: g.keyGen})
		e.update(cs, t, t.breakerKey, "", route, func(b *state.Breaker) bool {
			return breakerFailure(b, t.breaker, now, reason, targetProbe(b))
		})
	default: // request scope (or unknown): the target is healthy
		e.release(t, g)
	}
}
