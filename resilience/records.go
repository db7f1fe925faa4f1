package resilience

import (
	"context"
	"time"

	"github.com/llmguard/llmguard/state"
)

// The records: how a call reads and writes its target's and its key's
// breaker records. With a state.Pipelined store (Redis) a call's two
// records are read in one round trip, once for the walk's look at a
// server's wait and admission together, and the writes the call need not
// wait for (a success on a quiet record, an answer's rate-limit
// announcement) are made after it returns; that is all Redis adds to a
// call on an unpaced target. A write that opens a breaker, starts a
// cooldown or reports a probe is made before the call returns, as with
// any store.

// peeked is what the walk read of a target's records to decide whether to
// defer it (waitedElsewhere), for the admission right after.
type peeked struct {
	t      *targetPlan
	kb, tb state.Breaker
}

// records returns t's key and target records: those the walk read for t
// just before, else read now. Every call takes what was peeked, so an
// admission never sees records read before another target's attempt.
func (cs *callState) records(ctx context.Context, t *targetPlan) (kb, tb state.Breaker, err error) {
	if p := cs.peek.Swap(nil); p != nil && p.t == t {
		return p.kb, p.tb, nil
	}
	return cs.e.readRecords(ctx, t)
}

// readRecords reads t's key and target records (in one round trip from a
// state.Pipelined store).
func (e *Engine) readRecords(ctx context.Context, t *targetPlan) (kb, tb state.Breaker, err error) {
	if p, ok := e.store.(state.Pipelined); ok {
		bs, err := p.Breakers(ctx, []string{t.keyKey, t.breakerKey})
		if err != nil {
			return kb, tb, err
		}
		return bs[0], bs[1], nil
	}
	if kb, err = e.store.Breaker(ctx, t.keyKey); err != nil {
		return kb, tb, err
	}
	tb, err = e.store.Breaker(ctx, t.breakerKey)
	return kb, tb, err
}

// updateLater is update for a write the call need not wait for: with a
// state.Pipelined store it is made after the call returns, and a change
// of state it makes goes to the engine's hook (as a stream's failure
// does, see update); with another store it is update.
func (e *Engine) updateLater(cs *callState, t *targetPlan, key string, fn func(b *state.Breaker) bool) {
	p, ok := e.store.(state.Pipelined)
	if !ok {
		e.update(cs, t, key, "", "", fn)
		return
	}
	var from, to string
	p.UpdateBreakerLater(key, func(b *state.Breaker) bool {
		from = breakerState(b)
		ch := fn(b)
		to = breakerState(b)
		return ch
	}, func(err error) {
		if err != nil {
			e.log.Warn("llmguard: breaker update failed", "key", key, "err", err)
			return
		}
		if from != to && e.onEvent != nil {
			e.onEvent(Event{Kind: EventBreaker, Time: time.Now(), Route: cs.rp.name, Target: t.name, From: from, To: to})
		}
	})
}

// paceLater is how a target's pacer writes an answer's announcement to
// the bucket its engines share: after the call returns, on a
// state.Pipelined store (nil: as its other writes).
func (e *Engine) paceLater(key string) func(fn func(b *state.Pace) bool) {
	p, ok := e.store.(state.Pipelined)
	if !ok {
		return nil
	}
	return func(fn func(b *state.Pace) bool) {
		p.UpdateBreakerLater(key, func(b *state.Breaker) bool { return fn(&b.Pace) }, nil)
	}
}
