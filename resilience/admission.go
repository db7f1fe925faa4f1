package resilience

import (
	"context"
	"strings"
	"time"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state"
)

// Admission decides whether a call may go to a target now: the provider
// key's breaker, then the target's (a grant, or a refusal saying until
// when), a slot of the target's concurrency limit, and, before a retry, a
// share of its retry budget. Waiting for a refusal to end is the walk's
// (see hold in walk.go).

// grant is what admission granted, for the outcome report: whether the
// call is a half-open probe of the key's or the target's breaker, and the
// generation of the half-open state it probes (a report from an older
// state is not a probe's).
type grant struct {
	keyProbe, targetProbe bool
	keyGen, targetGen     uint64
	// paced: the target's record holds a pacing bucket in force (see pacer.apply).
	paced bool
	// quiet: the target's record was quiet (closed, no cooldown) at
	// admission, so the call's success only counts in its window.
	quiet bool
}

// refusal is why admission turned a target away: reason (empty when it
// admitted), until when the refusal lasts (zero when unknown), whether it
// is a rate-limit cooldown, and whether the call may wait for it (hold: the
// target's own breaker or a cooldown, never a key's breaker on a bad key or
// an empty balance).
type refusal struct {
	reason      string
	until       time.Time
	rateLimited bool
	hold        bool
	// fault is the key fault the refusing breaker holds (see keyFault),
	// first seen at since; ineligible marks a fallback the rules forbid.
	fault      *provider.Error
	since      time.Time
	ineligible bool
}

// storePrefix starts the reason of a refusal by a failing state store.
const storePrefix = "state store: "

// admit asks both breakers (the provider key's, then the target's) whether
// a call may go to t at now. A refusal with a reason means no; it says
// until when the breaker refuses (an open breaker's OpenUntil, a probe
// recheck, a cooldown's next paced call) when that is known.
func (e *Engine) admit(ctx context.Context, cs *callState, t *targetPlan, now time.Time) (grant, refusal) {
	var g grant
	kb, tb, err := cs.records(ctx, t)
	if err != nil {
		return g, refusal{reason: storePrefix + err.Error()}
	}
	ok, probe, why := e.ask(ctx, cs, t, t.keyKey, t.keyLabel, &kb, now)
	if !ok {
		if why.reason != "" && !strings.HasPrefix(why.reason, storePrefix) {
			why.reason = "key " + t.provider + ": " + why.reason
			if !why.rateLimited {
				why.fault, why.since = faultError(t, kb.Fault)
			}
		}
		// A key's breaker opens on a bad key or an empty balance: not
		// worth waiting for. Its rate-limit cooldown is.
		why.hold = why.rateLimited
		return g, why
	}
	g.keyProbe, g.keyGen = probe, kb.Generation
	quiet := breakerQuiet(&tb, now)
	ok, probe, why = e.ask(ctx, cs, t, t.breakerKey, "", &tb, now)
	if !ok {
		e.release(t, g)
		why.hold = !strings.HasPrefix(why.reason, storePrefix)
		return grant{}, why
	}
	g.targetProbe, g.targetGen, g.paced, g.quiet = probe, tb.Generation, paceInForce(&tb.Pace, now), quiet && !probe
	t.rt.learn(&tb.Facts)
	return g, refusal{}
}

// ask asks the breaker at key, whose record was just read as *b, whether a
// call may start at now, and leaves in *b the record as the answer left
// it. A quiet record (closed, no cooldown) admits without a write.
func (e *Engine) ask(ctx context.Context, cs *callState, t *targetPlan, key, label string, b *state.Breaker, now time.Time) (ok, probe bool, why refusal) {
	if breakerQuiet(b, now) {
		return true, false, refusal{}
	}
	from := breakerState(b)
	var err error
	*b, ok, probe, why, err = e.askStore(ctx, t, key, now)
	if err != nil {
		return false, false, refusal{reason: storePrefix + err.Error()}
	}
	cs.breakerEvent(t.name, from, breakerState(b), label)
	if !ok {
		return false, false, why
	}
	return true, probe, refusal{}
}

// askStore is ask's write to the record at key (apart from ask, so that a
// quiet record's admission allocates nothing for the closure).
func (e *Engine) askStore(ctx context.Context, t *targetPlan, key string, now time.Time) (after state.Breaker, ok, probe bool, why refusal, err error) {
	after, err = e.store.UpdateBreaker(ctx, key, func(b *state.Breaker) bool {
		var changed bool
		ok, probe, changed, why.reason = breakerAllow(b, t.breaker, now)
		why.until, why.rateLimited = refusedUntil(b, now)
		return changed
	})
	return after, ok, probe, why, err
}

// release returns a grant's half-open probe slots without an outcome.
func (e *Engine) release(t *targetPlan, g grant) {
	if g.keyProbe {
		e.update(nil, t, t.keyKey, t.keyLabel, "", func(b *state.Breaker) bool { return b.Generation == g.keyGen && breakerRelease(b) })
	}
	if g.targetProbe {
		e.update(nil, t, t.breakerKey, "", "", func(b *state.Breaker) bool { return b.Generation == g.targetGen && breakerRelease(b) })
	}
}

// concurrencyPrefix starts the reason of a target skipped for want of a
// slot of its concurrency limit.
const concurrencyPrefix = "concurrency limit: "

// acquireSlot takes a slot of t's concurrency limit, waiting in line for
// at most the route's queue timeout or the time left. It returns the
// function that gives the slot back, or why there was none.
func (cs *callState) acquireSlot(ctx context.Context, t *targetPlan, left time.Duration) (release func(), refused string) {
	rt := t.rt
	wait := min(cs.rp.queueTimeout, left)
	until := time.Now().Add(wait)
	if sem := rt.sem; sem != nil && !sem.TryAcquire(1) {
		// No free slot (or callers queued before this one): wait in line.
		qctx, cancel := context.WithDeadline(ctx, until)
		rt.queued.Add(1)
		err := sem.Acquire(qctx, 1)
		rt.queued.Add(-1)
		cancel()
		if err != nil {
			return nil, concurrencyPrefix + "no slot within " + wait.Round(time.Millisecond).String()
		}
	}
	if cs.e.leases != nil && rt.limit > 0 {
		// Then one of the slots the engines sharing the store share.
		unlease, ok := cs.sharedSlot(ctx, t, until)
		if !ok {
			rt.sem.Release(1)
			return nil, concurrencyPrefix + "no slot shared with the other replicas within " + wait.Round(time.Millisecond).String()
		}
		rt.inFlight.Add(1)
		return func() { unlease(); rt.done() }, ""
	}
	rt.inFlight.Add(1)
	return rt.done, ""
}

// retryAllowed is how many retry attempts may be in flight on t at once:
// max(min_retry_concurrency, budget × calls active on t). A call waiting out
// its backoff holds no slot: it puts no load on the upstream.
func retryAllowed(t *targetPlan) int64 {
	return max(int64(t.retry.budget*float64(t.rt.active.Load())), int64(t.retry.minConcurrency))
}

// retryRoom reports whether t's retry budget has a free slot now. It is
// asked when an attempt fails; the retry takes its slot after the backoff
// (takeRetrySlot) and gives it back when the attempt ends.
func retryRoom(t *targetPlan) bool { return t.rt.retrying.Load() < retryAllowed(t) }

// skipRetryBudget is the reason of a retry the target's retry budget refused.
const skipRetryBudget = "retry budget exhausted"

// takeRetrySlot takes a free slot of t's retry budget for a retry attempt,
// if there is one. The budget is asked again when the backoff ends: calls
// that failed together all found room then, and leave their backoff
// together.
func takeRetrySlot(t *targetPlan) bool {
	for {
		n := t.rt.retrying.Load()
		if n >= retryAllowed(t) {
			return false
		}
		if t.rt.retrying.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// deferWaited reports whether the walk should try t after the targets in
// later: a server asked another engine's call to keep off t (or its key)
// until a moment still ahead (state.Breaker.WaitUntil), and one of later
// may serve the call. A wait this engine's own call got is left to that
// call and to the window (see breakerRateLimited), as in a single process;
// t stays last in line, never refused, so a call it alone can serve still
// tries it.
func (cs *callState) deferWaited(ctx context.Context, t *targetPlan, later []int) bool {
	if len(later) == 0 {
		return false
	}
	if !cs.waitedElsewhere(ctx, t) {
		return false
	}
	for _, j := range later {
		if u := cs.rp.targets[j]; !cs.hedgedTo[u] && cs.cannotServe(u) == "" {
			return true
		}
	}
	return false
}

// waitedElsewhere reports whether a server asked another engine's call to
// keep off t (or its key) until a moment still ahead. It keeps the records
// it read from a state.Pipelined store for t's admission (see records).
func (cs *callState) waitedElsewhere(ctx context.Context, t *targetPlan) bool {
	now := time.Now()
	kb, tb, err := cs.e.readRecords(ctx, t)
	if err != nil {
		return false
	}
	if _, ok := cs.e.store.(state.Pipelined); ok { // a read saved is a round trip
		cs.peek.Store(&peeked{t: t, kb: kb, tb: tb})
	}
	waited := func(b *state.Breaker) bool { return now.Before(b.WaitUntil) && b.WaitBy != cs.e.id }
	return waited(&tb) || waited(&kb)
}
