package resilience

import (
	"context"
	"errors"
	"time"

	"github.com/llmguard/llmguard/provider"
)

// hedgeResult is the end of one branch of a hedge.
type hedgeResult struct {
	idx  int
	t    *targetPlan
	out  outcome
	pe   *provider.Error
	skip string
}

// errHedgeCancelled is the cause of a hedge branch's cancellation: it lost,
// or the primary's failure forbade it. Its attempt is not recorded as a
// failure, as the target is not to blame.
var errHedgeCancelled = errors.New("hedge branch cancelled")

// hedged makes the first attempt on target i and, if it has neither
// succeeded nor failed within the route's hedge_after, starts one attempt on
// the next target the walker could fall back to (see hedgeTarget). The
// first success wins and the other is cancelled (a losing stream is
// closed). A primary that fails before the hedge fires returns at once, so
// a deterministic error is never hedged; one that fails while the hedge
// runs with a failure the fallback rules do not let move to the hedge's
// target (content_filtered without opt-in, invalid_request, a context
// window no larger) cancels the hedge and discards its answer. prev and
// prevT are the failure the call is falling back from to target i (nil for
// the route's first target).
func (cs *callState) hedged(ctx context.Context, stream bool, i int, tk ticket, prev *provider.Error, prevT *targetPlan) (outcome, *targetPlan, *provider.Error, string) {
	rp := cs.rp
	primaryT := rp.targets[i]
	results := make(chan hedgeResult, 2)
	var cancels []context.CancelCauseFunc
	run := func(t *targetPlan, tk ticket) {
		bctx, bcancel := context.WithCancelCause(ctx)
		idx := len(cancels)
		cancels = append(cancels, bcancel)
		go func() {
			out, pe, skip := cs.attempt(bctx, stream, t, tk, 1, cs.left())
			results <- hedgeResult{idx: idx, t: t, out: out, pe: pe, skip: skip}
		}()
	}
	cs.mu.Lock()
	used := cs.total + 1 // the primary's attempt, counted once it has a slot
	cs.mu.Unlock()
	run(primaryT, tk)
	timer := time.NewTimer(rp.hedgeAfter)
	defer timer.Stop()
	pending, hedging, vetoed := 1, false, false
	var hedgeT *targetPlan
	var primary, other *hedgeResult
	for pending > 0 {
		select {
		case r := <-results:
			pending--
			if r.skip == "" && r.pe == nil && !vetoed {
				for j, c := range cancels {
					if j != r.idx {
						c(errHedgeCancelled)
					}
				}
				if stream {
					// The winner's context lives as long as its stream.
					win := cancels[r.idx]
					r.out.stream.onClose = append(r.out.stream.onClose, func() { win(context.Canceled) })
				} else {
					cancels[r.idx](context.Canceled)
				}
				if pending > 0 {
					go drainHedge(results, pending)
				}
				return r.out, r.t, nil, ""
			}
			if r.out.stream != nil {
				// A hedge that answered after the primary forbade it.
				_ = r.out.stream.Close()
			}
			cancels[r.idx](context.Canceled)
			if r.idx == 0 {
				primary = &r
				if !hedging {
					return outcome{}, nil, r.pe, r.skip
				}
				if r.pe != nil && pending > 0 {
					if ok, _, _ := cs.fallbackOK(r.pe, primaryT, hedgeT); !ok {
						vetoed = true
						cancels[1](errHedgeCancelled)
					}
				}
			} else {
				other = &r
				if r.skip != "" {
					// The hedge never reached its target: the walker may still try it.
					delete(cs.hedgedTo, hedgeT)
				}
			}
		case <-timer.C:
			if used >= rp.maxTotal {
				continue // a hedge would exceed max_total_attempts
			}
			u, utk := cs.hedgeTarget(ctx, i, prev, prevT)
			if u == nil {
				continue
			}
			hedging, hedgeT = true, u
			pending++
			if cs.hedgedTo == nil {
				cs.hedgedTo = make(map[*targetPlan]bool, 1)
			}
			cs.hedgedTo[u] = true
			cs.mu.Lock()
			cs.fallbacks++
			cs.mu.Unlock()
			u.rt.fallbacks.Add(1)
			cs.emit(Event{Kind: EventFallback, Target: u.name, From: primaryT.name,
				Reason: "hedge: no answer within " + rp.hedgeAfter.String()})
			run(u, utk)
		}
	}
	// Every branch failed: report the primary's outcome so the walker
	// decides retries on it (the hedge's failure is already recorded, and
	// the walker does not try the hedge's target again).
	if primary.skip != "" && other != nil && other.pe != nil {
		return outcome{}, nil, other.pe, ""
	}
	return outcome{}, nil, primary.pe, primary.skip
}

// hedgeTarget picks and admits the target a hedge from target i goes to:
// the first later target not tried by a hedge yet that the fallback rules
// allow after prev (the failure the call fell back to i from, if any) and
// whose breakers admit a call. It returns nil when there is none.
func (cs *callState) hedgeTarget(ctx context.Context, i int, prev *provider.Error, prevT *targetPlan) (*targetPlan, ticket) {
	rp := cs.rp
	for j := i + 1; j < len(rp.targets); j++ {
		u := rp.targets[j]
		if cs.hedgedTo[u] || cs.cannotServe(u) != "" {
			continue
		}
		if prev != nil {
			ok, stop, _ := cs.fallbackOK(prev, prevT, u)
			if stop {
				return nil, ticket{}
			}
			if !ok {
				continue
			}
		}
		utk, no := cs.e.admit(ctx, cs, u, time.Now())
		if no.reason != "" {
			continue
		}
		return u, utk
	}
	return nil, ticket{}
}

// drainHedge waits for the branches still running after a hedge was won
// and closes any stream that succeeded too late.
func drainHedge(results <-chan hedgeResult, pending int) {
	for range pending {
		r := <-results
		if r.out.stream != nil {
			_ = r.out.stream.Close()
		}
	}
}
