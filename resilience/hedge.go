package resilience

import (
	"context"
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

// hedged makes the first attempt on target i and, if it has neither
// succeeded nor failed within the route's hedge_after, starts one attempt on
// the next admissible target too. The first success wins and the other is
// cancelled (a losing stream is closed). A primary that fails before the
// hedge fires returns at once, so a deterministic error is never hedged.
func (cs *callState) hedged(ctx context.Context, stream bool, i int, tk ticket) (outcome, *targetPlan, *provider.Error, string) {
	rp := cs.rp
	results := make(chan hedgeResult, 2)
	var cancels []context.CancelFunc
	run := func(t *targetPlan, tk ticket) {
		bctx, bcancel := context.WithCancel(ctx)
		idx := len(cancels)
		cancels = append(cancels, bcancel)
		go func() {
			out, pe, skip := cs.attempt(bctx, stream, t, tk, 1, cs.left())
			results <- hedgeResult{idx: idx, t: t, out: out, pe: pe, skip: skip}
		}()
	}
	run(rp.targets[i], tk)
	timer := time.NewTimer(rp.hedgeAfter)
	defer timer.Stop()
	pending, hedging := 1, false
	var primary, other *hedgeResult
	for pending > 0 {
		select {
		case r := <-results:
			pending--
			if r.skip == "" && r.pe == nil {
				for j, c := range cancels {
					if j != r.idx {
						c()
					}
				}
				if stream {
					// The winner's context lives as long as its stream.
					r.out.stream.onClose = append(r.out.stream.onClose, cancels[r.idx])
				} else {
					cancels[r.idx]()
				}
				if pending > 0 {
					go drainHedge(results, pending)
				}
				return r.out, r.t, nil, ""
			}
			cancels[r.idx]()
			if r.idx == 0 {
				primary = &r
				if !hedging {
					return outcome{}, nil, r.pe, r.skip
				}
			} else {
				other = &r
			}
		case <-timer.C:
			if hedging {
				continue
			}
			for j := i + 1; j < len(rp.targets); j++ {
				u := rp.targets[j]
				utk, no := cs.e.admit(ctx, cs, u, cs.e.now())
				if no.reason != "" {
					continue
				}
				hedging = true
				pending++
				cs.mu.Lock()
				cs.fallbacks++
				cs.mu.Unlock()
				u.rt.fallbacks.Add(1)
				cs.emit(Event{Kind: EventFallback, Target: u.name, From: rp.targets[i].name,
					Reason: "hedge: no answer within " + rp.hedgeAfter.String()})
				run(u, utk)
				break
			}
		}
	}
	// Every branch failed: report the primary's outcome so the walker
	// decides retries on it (the hedge's failure is already recorded).
	if primary.skip != "" && other != nil && other.pe != nil {
		return outcome{}, nil, other.pe, ""
	}
	return outcome{}, nil, primary.pe, primary.skip
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
