package resilience

import (
	"fmt"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
)

// Context windows: a context_length_exceeded failure says the prompt does
// not fit the window of the target that answered it. From then on, for the
// rest of the call (whatever later failures say), a target whose window
// the catalogue knows to be no larger is passed over; a target whose window
// is unknown (every local model, every OpenAI-compatible server the
// catalogue does not list) is tried, after the targets known to be larger.

// noteOverflow records a context overflow on t (see windowRefusal).
func (cs *callState) noteOverflow(r *attemptResult) {
	if r.failure == nil || r.failure.Verdict.Class != classify.ContextLengthExceeded {
		return
	}
	cs.overflowed = true
	cs.overflowAt = max(cs.overflowAt, r.target.contextSize)
}

// windowRefusal says why to cannot take the call's prompt after a context
// overflow ("" when it may): its window is known and no larger than the
// largest known window that overflowed, counting from's when pe is from's
// overflow (not yet recorded: a hedge's primary failure).
func (cs *callState) windowRefusal(pe *provider.Error, from, to *targetPlan) string {
	at := cs.overflowAt
	if pe.Verdict.Class == classify.ContextLengthExceeded {
		at = max(at, from.contextSize)
	}
	if at > 0 && to.contextSize != 0 && to.contextSize <= at {
		return fmt.Sprintf("context window %d not larger than %d", to.contextSize, at)
	}
	return ""
}

// deferUnknownWindow reports whether the walk should try t later: the call
// overflowed a context window, t's window is unknown, and a target after it
// in order (not yet tried) is known to be larger.
func (cs *callState) deferUnknownWindow(t *targetPlan, later []int) bool {
	if !cs.overflowed || t.contextSize != 0 {
		return false
	}
	for _, j := range later {
		u := cs.rp.targets[j]
		if u.contextSize > cs.overflowAt && !cs.hedgedTo[u] && cs.cannotServe(u) == "" {
			return true
		}
	}
	return false
}
