package resilience

import (
	"context"
	"fmt"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/wait"
	"github.com/llmguard/llmguard/provider"
)

// The walk: target by target in the plan's order, each admitted, attempted
// and retried while its policy allows; a failure moves on to the next
// target its verdict may fall back to; a pass that ends with every target
// spent but one that refused until a known moment holds for it and walks
// again. See doc.go for the whole order.

// walk runs the route: attempts, retries, fallbacks. For streams ctx is the
// caller's (the deadline is enforced by per-attempt timers, so the returned
// stream can outlive it); for Chat it carries the deadline.
//
// When a pass over the targets ends with every target spent and one of them
// turned the call away until a known moment (its breaker open, half-open
// with its probes out, a rate-limit cooldown) that fits the call's time left
// and the target's max_wait, the call waits for it and walks again: an
// outage shorter than the deadline costs the caller time, not the answer.
func (cs *callState) walk(ctx context.Context, stream bool) (answer, *targetPlan, error) {
	for pass := 0; ; pass++ {
		if pass > 0 {
			cs.skipped, cs.retryAt = nil, time.Time{} // the earlier pass's, out of date
			cs.hedgedTo = nil
		}
		out, winner, err := cs.pass(ctx, stream)
		if err == nil {
			return out, winner, nil
		}
		if err == ErrExhausted {
			if held, herr := cs.hold(ctx); herr != nil {
				err = herr
			} else if held {
				continue
			}
		}
		return answer{}, nil, cs.fail(err)
	}
}

// holdSpread spreads the wake-ups of calls held until the same moment.
const holdSpread = 500 * time.Millisecond

// hold waits until the pass's holdAt when it fits the time left (and the
// call's max_total_attempts leaves an attempt), reporting whether it did.
// err is ErrDeadline when the caller went away while waiting.
func (cs *callState) hold(ctx context.Context) (bool, error) {
	at := cs.holdAt
	cs.holdAt = time.Time{}
	if at.IsZero() || int(cs.total.Load()) >= cs.rp.maxTotal || cs.outOfTime(ctx) {
		return false, nil
	}
	// Calls held for the same moment wake spread over holdSpread, so a
	// recovering target is not met by all of them at once.
	d := max(time.Until(at), time.Millisecond)
	if spread := d + cs.e.randDuration(holdSpread); spread < cs.left() {
		d = spread
	} else if d >= cs.left() {
		return false, nil
	}
	if err := wait.For(ctx, d); err != nil {
		return false, ErrDeadline
	}
	cs.waited += d
	return true, nil
}

// pass walks the route's targets once. It returns the winning outcome and
// target, or the sentinel the call would fail with.
func (cs *callState) pass(ctx context.Context, stream bool) (answer, *targetPlan, error) {
	rp := cs.rp
	if cs.unservable() {
		return answer{}, nil, cs.fail(ErrUnservable)
	}
	var last *provider.Error
	var lastT *targetPlan
	order := make([]int, len(rp.targets))
	for i := range order {
		order[i] = i
	}
	deferred := map[int]bool{}
	for k := 0; k < len(order); k++ {
		i := order[k]
		t := rp.targets[i]
		if cs.hedgedTo[t] {
			continue // a hedge tried it: its failure is recorded already
		}
		if !deferred[i] && cs.deferUnknownWindow(t, order[k+1:]) {
			deferred[i] = true
			order = append(order, i) // after the targets known to be larger
			continue
		}
		if !deferred[i] && cs.deferWaited(ctx, t, order[k+1:]) {
			deferred[i] = true
			order = append(order, i) // after the targets no server asked to wait
			continue
		}
		if why := cs.cannotServe(t); why != "" {
			cs.skip(t, why)
			continue
		}
		if last != nil {
			ok, stop, why := cs.fallbackOK(last, lastT, t)
			if !ok {
				cs.refused(t, refusal{reason: why, ineligible: true})
				if stop {
					return answer{}, nil, ErrRejected
				}
				continue
			}
		}
		end := cs.onTarget(ctx, stream, i, last, lastT)
		if end.winner != nil {
			return end.answer, end.winner, nil
		}
		if end.last != nil {
			last, lastT = end.last, t
		}
		if end.stop != nil {
			return answer{}, nil, end.stop
		}
	}
	if cs.outOfTime(ctx) {
		return answer{}, nil, ErrDeadline
	}
	if last != nil {
		// The last failure may forbid any other target (invalid_request,
		// content_filtered without opt-in, no fallback): say so even when
		// no target was left to refuse.
		if _, stop, _ := cs.fallbackOK(last, lastT, lastT); stop {
			return answer{}, nil, ErrRejected
		}
	}
	return answer{}, nil, ErrExhausted
}

// targetEnd is how the walk left a target.
type targetEnd struct {
	answer answer
	winner *targetPlan     // the target that answered (a hedge's may be another); nil: none did
	last   *provider.Error // the last failure on the target (nil: skipped, or it answered)
	stop   error           // the sentinel the whole call ends with (nil: the walk goes on)
}

// onTarget runs the attempts on target i: admission, the attempt (hedged
// on the first), and retries while the verdict, the target's policy and
// the time left allow. prev is the failure on prevT that the call falls
// back from (nil for the first target tried).
func (cs *callState) onTarget(ctx context.Context, stream bool, i int, prev *provider.Error, prevT *targetPlan) targetEnd {
	rp := cs.rp
	t := rp.targets[i]
	t.rt.active.Add(1)
	retrySlot := false // a retry-budget slot, held for the retry attempt
	defer func() {
		if retrySlot {
			t.rt.retrying.Add(-1)
		}
		t.rt.active.Add(-1)
	}()
	var end targetEnd
	for n := 1; ; n++ {
		if cs.outOfTime(ctx) {
			end.stop = ErrDeadline
			return end
		}
		if int(cs.total.Load()) >= rp.maxTotal {
			cs.skip(t, skipMaxTotal)
			end.stop = ErrExhausted
			return end
		}
		g, why := cs.e.admit(ctx, cs, t, time.Now())
		if why.reason != "" {
			cs.refused(t, why)
			return end
		}
		if n == 1 && prev != nil {
			cs.fallbacks++
			t.rt.fallbacks.Add(1)
			cs.emit(Event{Kind: EventFallback, Target: t.name, From: prevT.name, Verdict: verdictOf(prev)})
		}
		var r attemptResult
		if n == 1 && rp.hedgeDelay(stream) > 0 && i+1 < len(rp.targets) {
			r = cs.hedged(ctx, stream, i, g, prev, prevT)
		} else {
			r = cs.attempt(ctx, stream, t, g, n)
			cs.record(&r)
		}
		if retrySlot {
			retrySlot = false
			t.rt.retrying.Add(-1)
		}
		switch {
		case r.skip != "":
			cs.refused(t, refusal{reason: r.skip, until: r.skipUntil, rateLimited: !r.skipUntil.IsZero(), hold: !r.skipUntil.IsZero()})
			return end
		case r.failure == nil:
			end.answer, end.winner = r.answer, r.target
			return end
		}
		end.last = r.failure
		if cs.outOfTime(ctx) {
			end.stop = ErrDeadline
			return end
		}
		d, ok := cs.retryWait(t, n, r.failure)
		if !ok {
			return end
		}
		t.rt.retries.Add(1)
		cs.emit(Event{Kind: EventRetry, Target: t.name, Attempt: n + 1, MaxAttempts: t.retry.maxAttempts, Verdict: verdictOf(r.failure), Wait: d})
		if err := wait.For(ctx, d); err != nil {
			end.stop = ErrDeadline
			return end
		}
		cs.waited += d
		// The budget was asked when the attempt failed and is asked again
		// now (calls that failed together leave their backoff together);
		// the slot is taken for the retry itself, since a call waiting out
		// its backoff puts no load on the upstream.
		if !takeRetrySlot(t) {
			cs.skip(t, skipRetryBudget)
			return end
		}
		retrySlot = true
	}
}

// retryWait decides whether the call retries t after pe, the failure of
// its n-th attempt there, and after how long: only a retryable verdict
// other than a timeout or a broken stream, within max_attempts, a server
// wait within max_wait, a free share of the retry budget, and a backoff
// that fits the time left. Otherwise the call moves on, noting when the
// server said to come back.
func (cs *callState) retryWait(t *targetPlan, n int, pe *provider.Error) (time.Duration, bool) {
	v := &pe.Verdict
	var skip string
	switch {
	case !v.Retryable || v.Class == classify.Timeout || pe.AfterFirstToken, n >= t.retry.maxAttempts:
	case v.Wait > t.retry.maxWait:
		skip = fmt.Sprintf("server asked to wait %s, more than max_wait %s", v.Wait, t.retry.maxWait)
	case !retryRoom(t):
		skip = skipRetryBudget
	default:
		d := cs.e.jitter(n, t.retry, v.Wait)
		if d < cs.left() {
			return d, true
		}
		skip = fmt.Sprintf("wait %s does not fit the time left", d.Round(time.Millisecond))
	}
	cs.noteRetryAt(retryAtOf(time.Now(), v))
	if skip != "" {
		cs.skip(t, skip)
	}
	return 0, false
}
