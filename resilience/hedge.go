package resilience

import (
	"context"
	"errors"
	"time"

	"github.com/llmguard/llmguard/provider"
)

// The hedge: a first attempt with no answer within the route's hedge_after
// starts the next target the walk could fall back to as well; the first
// success wins. Its branches run attempts on goroutines of their own and
// report them to the walker, which records them.

// errHedgeCancelled is the cause of a hedge branch's cancellation: it lost,
// or the primary's failure forbade it. Its attempt is not recorded as a
// failure, as the target is not to blame.
var errHedgeCancelled = errors.New("hedge branch cancelled")

// hedge is one hedged first attempt, run by the walker's goroutine.
type hedge struct {
	cs      *callState
	stream  bool
	results chan branchResult
	cancels []context.CancelCauseFunc
	pending int
}

// branchResult is one branch's attempt: branch 0 is the primary.
type branchResult struct {
	branch int
	attemptResult
}

// start runs an attempt on t as a new branch. The branch holds the call's
// request (provider.Request.Acquire) from here, on the walker's goroutine,
// whose caller holds it, until its attempt returns: a branch that loses
// may run on after the call, and its request's bytes must stay its own
// for as long as it reads them.
func (h *hedge) start(ctx context.Context, t *targetPlan, g grant) {
	bctx, cancel := context.WithCancelCause(ctx)
	branch := len(h.cancels)
	h.cancels = append(h.cancels, cancel)
	h.pending++
	req := h.cs.c.Request
	if req != nil && !req.Acquire() {
		// Its maker is done with it: only a caller that let go of the
		// request before the call ended meets this.
		h.cs.e.release(t, g)
		h.results <- branchResult{branch, attemptResult{target: t, skip: "request released"}}
		return
	}
	go func() {
		r := h.cs.attempt(bctx, h.stream, t, g, 1)
		if req != nil {
			req.Release()
		}
		h.results <- branchResult{branch, r}
	}()
}

// win ends the hedge with branch r's success: the others are cancelled
// (a stream that succeeds too late is closed), and the winner's context
// lives as long as its stream.
func (h *hedge) win(r *branchResult) {
	for j, c := range h.cancels {
		if j != r.branch {
			c(errHedgeCancelled)
		}
	}
	if win := h.cancels[r.branch]; h.stream {
		r.answer.stream.onClose = append(r.answer.stream.onClose, func() { win(context.Canceled) })
	} else {
		win(context.Canceled)
	}
	if h.pending > 0 {
		go drainHedge(h.results, h.pending)
	}
}

// hedgeDelay is how long a first attempt runs before it is hedged: the
// route's hedge_after, else for a stream its first-token hedge (0: never).
func (rp *routePlan) hedgeDelay(stream bool) time.Duration {
	if rp.hedgeAfter > 0 || !stream {
		return rp.hedgeAfter
	}
	return rp.firstTokenHedge
}

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
// the route's first target). Every branch's attempt is recorded here.
func (cs *callState) hedged(ctx context.Context, stream bool, i int, g grant, prev *provider.Error, prevT *targetPlan) attemptResult {
	rp := cs.rp
	primaryT := rp.targets[i]
	h := &hedge{cs: cs, stream: stream, results: make(chan branchResult, 2)}
	used := int(cs.total.Load()) + 1 // the primary's attempt, counted once it has a slot
	h.start(ctx, primaryT, g)
	timer := time.NewTimer(rp.hedgeDelay(stream))
	defer timer.Stop()
	vetoed := false
	var hedgeT *targetPlan
	var primary, other *attemptResult
	for h.pending > 0 {
		select {
		case r := <-h.results:
			h.pending--
			cs.record(&r.attemptResult)
			if r.skip == "" && r.failure == nil && !vetoed {
				h.win(&r)
				if r.branch > 0 {
					cs.emit(Event{Kind: EventHedgeWon, Target: hedgeT.name, From: primaryT.name})
				}
				return r.attemptResult
			}
			if r.answer.stream != nil {
				// A hedge that answered after the primary forbade it.
				_ = r.answer.stream.Close()
				cs.wastePrompt(r.target)
			}
			h.cancels[r.branch](context.Canceled)
			if r.branch > 0 {
				other = &r.attemptResult
				if r.skip != "" {
					// The hedge never reached its target: the walker may still try it.
					delete(cs.hedgedTo, hedgeT)
				}
				continue
			}
			primary = &r.attemptResult
			if hedgeT == nil {
				return r.attemptResult
			}
			if r.failure != nil && h.pending > 0 {
				if ok, _, _ := cs.fallbackOK(r.failure, primaryT, hedgeT); !ok {
					vetoed = true
					h.cancels[1](errHedgeCancelled)
				}
			}
		case <-timer.C:
			if used >= rp.maxTotal {
				continue // a hedge would exceed max_total_attempts
			}
			if hedgeT = cs.startHedge(ctx, h, i, prev, prevT); hedgeT == nil {
				continue
			}
		}
	}
	// Every branch failed: report the primary's failure so the walker
	// decides retries on it (the hedge's failure is recorded already, and
	// the walker does not try the hedge's target again).
	if primary.skip != "" && other != nil && other.failure != nil {
		return attemptResult{target: primaryT, failure: other.failure}
	}
	return attemptResult{target: primaryT, failure: primary.failure, skip: primary.skip, skipUntil: primary.skipUntil}
}

// startHedge picks the hedge's target (see hedgeTarget) and starts its
// branch, counting a fallback. It returns nil when no target may take it.
func (cs *callState) startHedge(ctx context.Context, h *hedge, i int, prev *provider.Error, prevT *targetPlan) *targetPlan {
	u, g := cs.hedgeTarget(ctx, i, prev, prevT)
	if u == nil {
		return nil
	}
	if cs.hedgedTo == nil {
		cs.hedgedTo = make(map[*targetPlan]bool, 1)
	}
	cs.hedgedTo[u] = true
	cs.fallbacks++
	u.rt.fallbacks.Add(1)
	cs.emit(Event{Kind: EventFallback, Target: u.name, From: cs.rp.targets[i].name,
		Reason: "hedge: no answer within " + cs.rp.hedgeDelay(h.stream).String()})
	h.start(ctx, u, g)
	return u
}

// hedgeTarget picks and admits the target a hedge from target i goes to:
// the first later target not tried by a hedge yet that the fallback rules
// allow after prev (the failure the call fell back to i from, if any) and
// whose breakers admit a call, and that no server asked another engine's
// call to keep off (see deferWaited: a hedge is optional, so it skips such
// a target). It returns nil when there is none.
func (cs *callState) hedgeTarget(ctx context.Context, i int, prev *provider.Error, prevT *targetPlan) (*targetPlan, grant) {
	rp := cs.rp
	for j := i + 1; j < len(rp.targets); j++ {
		u := rp.targets[j]
		if cs.hedgedTo[u] || cs.cannotServe(u) != "" || cs.waitedElsewhere(ctx, u) {
			continue
		}
		if prev != nil {
			ok, stop, _ := cs.fallbackOK(prev, prevT, u)
			if stop {
				return nil, grant{}
			}
			if !ok {
				continue
			}
		}
		g, why := cs.e.admit(ctx, cs, u, time.Now())
		if why.reason != "" {
			continue
		}
		return u, g
	}
	return nil, grant{}
}

// drainHedge waits for the branches still running after a hedge was won
// and closes any stream that succeeded too late.
func drainHedge(results <-chan branchResult, pending int) {
	for range pending {
		r := <-results
		if r.answer.stream != nil {
			_ = r.answer.stream.Close()
		}
	}
}
