package resilience

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/llmguard/llmguard/internal/wait"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state"
)

// Pacing: a target's responses announce what is left of the caller's rate
// limits (provider.RateLimit: x-ratelimit-*, anthropic-ratelimit-*), and the
// engine paces the target by them, so that a burst of calls queues briefly
// or moves on instead of drawing 429s. One pacer per target (a target is a
// model on one provider key); engines given a Store pace by one bucket in
// the target's record there, so replicas sharing it share their pacing.
//
// The pacer is a token bucket written here rather than
// golang.org/x/time/rate's: each announcement sets how many requests are
// left, which rate.Limiter cannot be told.

// defaultPaceRate is the refill rate, in requests per second, of a limit
// whose announcement says what is left but not how fast it comes back
// (Azure sends only x-ratelimit-remaining-requests).
const defaultPaceRate = 1.0

// pacer paces one target's calls. Its bucket (state.Pace, see bucket.go)
// is its own, or, with share set, the one in the target's record in the
// engine's store, which the engines sharing that store pace by: a
// burst spread over replicas then draws no more 429s than one on a
// single replica. The calls in flight and waiting are this engine's. Its
// zero value knows nothing and lets every call through; it is safe for
// concurrent use.
type pacer struct {
	mu sync.Mutex
	b  state.Pace // the bucket, when share is nil
	// share applies fn to the bucket in the store (nil: b is the bucket).
	share func(fn func(b *state.Pace) bool)
	// later applies fn to the bucket in the store after the call returns
	// (nil: as share does).
	later func(fn func(b *state.Pace) bool)
	// inflight counts the calls sent and not yet answered; pending those
	// waiting for their reserved turn.
	inflight, pending int
}

// apply applies fn to the bucket; p.mu is held. A shared bucket is asked
// only when paced (admission found an announcement in force there), so an
// unpaced target costs the store nothing more.
func (p *pacer) apply(paced bool, fn func(b *state.Pace) bool) {
	switch {
	case p.share == nil:
		fn(&p.b)
	case paced:
		p.share(fn)
	}
}

// reserve asks for a turn to send a request at now, waiting at most
// maxWait. ok with wait 0: send now; ok with wait > 0: send after wait,
// then call started (or cancel if the call gives up waiting). Not ok: no
// turn within maxWait; next is when one would come. A call that sends must
// report its answer with done. paced is as for apply.
func (p *pacer) reserve(now time.Time, maxWait time.Duration, paced bool) (time.Duration, bool, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	wait, ok, next := time.Duration(0), true, time.Time{}
	switch { // as apply does, without a closure for the bucket of its own
	case p.share == nil:
		wait, ok, next = paceReserve(&p.b, now, maxWait)
	case paced:
		wait, ok, next = p.reserveShared(now, maxWait)
	}
	if !ok {
		return 0, false, next
	}
	if wait > 0 {
		p.pending++
	} else {
		p.inflight++
	}
	return wait, true, time.Time{}
}

// reserveShared is reserve's turn from the bucket in the store.
func (p *pacer) reserveShared(now time.Time, maxWait time.Duration) (wait time.Duration, ok bool, next time.Time) {
	ok = true
	p.share(func(b *state.Pace) bool {
		wait, ok, next = paceReserve(b, now, maxWait)
		return ok && b.Known
	})
	return wait, ok, next
}

// started moves a call that waited for its turn in flight.
func (p *pacer) started() {
	p.mu.Lock()
	p.pending = max(p.pending-1, 0)
	p.inflight++
	p.mu.Unlock()
}

// cancel gives back, at now, the turn of a call that gave up waiting, or
// of one granted a turn that it did not use (wasSent: it was in flight).
func (p *pacer) cancel(now time.Time, wasSent, paced bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if wasSent {
		p.inflight = max(p.inflight-1, 0)
	} else {
		p.pending = max(p.pending-1, 0)
	}
	p.apply(paced, func(b *state.Pace) bool {
		paceGiveBack(b, now)
		return b.Known
	})
}

// done records the answer (rl: what its headers announced, nil for none)
// of a call that was in flight, at now (see paceAnnounce).
func (p *pacer) done(rl *provider.RateLimit, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight = max(p.inflight-1, 0)
	if !announces(rl, now) {
		return
	}
	inflight, pending := p.inflight, p.pending
	fn := func(b *state.Pace) bool { return paceAnnounce(b, rl, now, inflight, pending) }
	if p.share != nil && p.later != nil {
		p.later(fn) // the answer is in: nothing waits for the write
		return
	}
	p.apply(true, fn)
}

// paceTurn waits for t's pacer to give the attempt its turn, at most the
// route's queue timeout or the time left (as for a concurrency slot). It
// returns the refusal of a turn further away than that: until it comes, so
// the walk moves on to another target, or holds for it when none serves.
func (cs *callState) paceTurn(ctx context.Context, t *targetPlan, g grant, left time.Duration) refusal {
	p := &t.rt.pace
	limit := min(cs.rp.queueTimeout, left)
	d, ok, next := p.reserve(time.Now(), limit, g.paced)
	if !ok {
		return refusal{reason: fmt.Sprintf("pacing: the announced rate limit has no request for %s, more than %s",
			time.Until(next).Round(time.Millisecond), limit.Round(time.Millisecond)), until: next, rateLimited: true, hold: true}
	}
	if d == 0 {
		return refusal{}
	}
	cs.emit(Event{Kind: EventPace, Target: t.name, Wait: d})
	if err := wait.For(ctx, d); err != nil {
		p.cancel(time.Now(), false, g.paced)
		return refusal{reason: "pacing: the caller went away waiting for its turn"}
	}
	p.started()
	return refusal{}
}

// rateLimitOf is what an attempt's answer or failure announced.
func rateLimitOf(a answer, pe *provider.Error) *provider.RateLimit {
	switch {
	case pe != nil:
		return pe.RateLimit
	case a.resp != nil:
		return a.resp.RateLimit
	case a.stream != nil:
		return streamRateLimit(a.stream.s)
	}
	return nil
}

// streamRateLimit is what a stream's response headers announced.
func streamRateLimit(s provider.Stream) *provider.RateLimit {
	if r, ok := s.(provider.RateLimitReporter); ok {
		return r.RateLimit()
	}
	return nil
}
