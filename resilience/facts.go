package resilience

import (
	"context"
	"time"

	"github.com/llmguard/llmguard/state"
)

// Learned facts: what an engine learns of a target from its answers (it
// rejects an assistant prefill; its streams break where its whole answers
// do not) is kept in the target's runtime and, for an engine given a Store,
// in the target's record there (state.Facts), so that the engines sharing
// the store do not each make the failing call again to learn it.
// Admission brings the record's facts into the runtime at no extra cost
// (it reads the record anyway); a continuation reads them first (see
// continueOn).

// learn brings the facts of a record into t's runtime.
func (rt *targetRuntime) learn(f *state.Facts) {
	if f.NoPrefill {
		rt.noPrefill.Store(true)
	}
	if u := f.WholeUntil.UnixNano(); !f.WholeUntil.IsZero() && u > rt.wholeUntil.Load() {
		rt.wholeUntil.Store(u)
	}
}

// recall reads t's record for its facts, when other engines may share it.
func (e *Engine) recall(ctx context.Context, t *targetPlan) {
	if !e.shared {
		return
	}
	if b, err := e.store.Breaker(ctx, t.breakerKey); err == nil {
		t.rt.learn(&b.Facts)
	}
}

// teach keeps what fn learned of t in its record too, when other engines
// may share it (fn returns whether it changed anything).
func (e *Engine) teach(t *targetPlan, fn func(f *state.Facts) bool) {
	if e.shared {
		e.update(nil, t, t.breakerKey, "", "", func(b *state.Breaker) bool { return fn(&b.Facts) })
	}
}

// noPrefillLearned: t answered a prefill with a 400.
func (e *Engine) noPrefillLearned(t *targetPlan) {
	t.rt.noPrefill.Store(true)
	e.teach(t, func(f *state.Facts) bool {
		if f.NoPrefill {
			return false
		}
		f.NoPrefill = true
		return true
	})
}

// wholeLearned: t's Chats ask for the answer whole until until.
func (e *Engine) wholeLearned(t *targetPlan, until time.Time) {
	t.rt.wholeUntil.Store(until.UnixNano())
	e.teach(t, func(f *state.Facts) bool {
		if !f.WholeUntil.Before(until) {
			return false
		}
		f.WholeUntil = until
		return true
	})
}
