package resilience

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/llmguard/llmguard/internal/wait"
	"github.com/llmguard/llmguard/provider"
)

// Pacing: a target's responses announce what is left of the caller's rate
// limits (provider.RateLimit: x-ratelimit-*, anthropic-ratelimit-*), and the
// engine paces the target by them, so that a burst of calls queues briefly
// or moves on instead of drawing 429s. One pacer per target (a target is a
// model on one provider key), in process: replicas sharing a Store each
// pace on what their own responses announce.
//
// The pacer is a token bucket written here rather than
// golang.org/x/time/rate's: each announcement sets how many requests are
// left, which rate.Limiter cannot be told.

// defaultPaceRate is the refill rate, in requests per second, of a limit
// whose announcement says what is left but not how fast it comes back
// (Azure sends only x-ratelimit-remaining-requests).
const defaultPaceRate = 1.0

// pacer paces one target's calls. Its zero value knows nothing and lets
// every call through; it is safe for concurrent use.
type pacer struct {
	mu sync.Mutex
	// known: an announcement is in force.
	known bool
	// tokens are the requests that may start now, less those reserved
	// by calls waiting for their turn (so negative while calls wait).
	tokens float64
	at     time.Time // when tokens was last brought forward
	size   float64   // the bucket: the announced limit, else the most announced left
	rate   float64   // requests regained per second (0: defaultPaceRate)
	full   time.Time // when the announced limit is whole again (zero: unknown)
	// spent: the announced token limit is used up until then.
	spent time.Time
	// inflight counts the calls sent and not yet answered; pending those
	// waiting for their reserved turn.
	inflight, pending int
}

// advance brings tokens forward to now.
func (p *pacer) advance(now time.Time) {
	if !p.known {
		return
	}
	if !p.full.IsZero() && !now.Before(p.full) && p.pending == 0 {
		// The announced limit is whole again.
		p.tokens = max(p.tokens, p.size)
	} else if dt := now.Sub(p.at).Seconds(); dt > 0 {
		rate := p.rate
		if rate <= 0 {
			rate = defaultPaceRate
		}
		p.tokens = min(p.tokens+dt*rate, p.size)
	}
	p.at = now
}

// reserve asks for a turn to send a request at now, waiting at most
// maxWait. ok with wait 0: send now; ok with wait > 0: send after wait,
// then call started (or cancel if the call gives up waiting). Not ok: no
// turn within maxWait; next is when one would come. A call that sends must
// report its answer with done.
func (p *pacer) reserve(now time.Time, maxWait time.Duration) (wait time.Duration, ok bool, next time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advance(now)
	d := max(p.spent.Sub(now), 0)
	if p.known {
		p.tokens--
		if p.tokens < 0 {
			rate := p.rate
			if rate <= 0 {
				rate = defaultPaceRate
			}
			turn := time.Duration(-p.tokens / rate * float64(time.Second))
			if !p.full.IsZero() && p.pending == 0 {
				turn = min(turn, max(p.full.Sub(now), 0))
			}
			d = max(d, turn)
		}
	}
	if d > maxWait {
		if p.known {
			p.tokens++
		}
		return 0, false, now.Add(d)
	}
	if d > 0 {
		p.pending++
	} else {
		p.inflight++
	}
	return d, true, time.Time{}
}

// started moves a call that waited for its turn in flight.
func (p *pacer) started() {
	p.mu.Lock()
	p.pending = max(p.pending-1, 0)
	p.inflight++
	p.mu.Unlock()
}

// cancel gives back the turn of a call that gave up waiting, or of one
// granted a turn that it did not use (wasSent: it was in flight).
func (p *pacer) cancel(wasSent bool) {
	p.mu.Lock()
	if wasSent {
		p.inflight = max(p.inflight-1, 0)
	} else {
		p.pending = max(p.pending-1, 0)
	}
	if p.known {
		p.tokens++
	}
	p.mu.Unlock()
}

// done records the answer (rl: what its headers announced, nil for none)
// of a call that was in flight, at now. The requests left are what the
// answer announced less the other calls in flight (which the provider may
// not have counted yet) and those waiting; an announcement only lowers
// what the pacer allows, which then grows back at the announced rate.
func (p *pacer) done(rl *provider.RateLimit, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight = max(p.inflight-1, 0)
	if rl == nil {
		return
	}
	if q := rl.Tokens; q.Known && q.Remaining == 0 && q.Reset.After(now) {
		p.spent = q.Reset
	}
	q := rl.Requests
	if !q.Known {
		return
	}
	p.advance(now)
	left := float64(q.Remaining - p.inflight - p.pending)
	if !p.known || left < p.tokens {
		p.tokens = left
	}
	p.known, p.at = true, now
	// The bucket holds at least one request, so one that announced none
	// left and no limit (Azure) still lets one through as it refills.
	p.size = max(float64(q.Limit), float64(q.Remaining), p.size, 1)
	if q.Limit > 0 {
		p.size = float64(q.Limit)
	}
	p.full = q.Reset
	if d := q.Reset.Sub(now).Seconds(); q.Limit > q.Remaining && d > 0 {
		p.rate = float64(q.Limit-q.Remaining) / d
	}
}

// paceTurn waits for t's pacer to give the attempt its turn, at most the
// route's queue timeout or the time left (as for a concurrency slot). It
// returns the refusal of a turn further away than that: until it comes, so
// the walk moves on to another target, or holds for it when none serves.
func (cs *callState) paceTurn(ctx context.Context, t *targetPlan, left time.Duration) refusal {
	p := &t.rt.pace
	limit := min(cs.rp.queueTimeout, left)
	d, ok, next := p.reserve(time.Now(), limit)
	if !ok {
		return refusal{reason: fmt.Sprintf("pacing: the announced rate limit has no request for %s, more than %s",
			time.Until(next).Round(time.Millisecond), limit.Round(time.Millisecond)), until: next, rateLimited: true, hold: true}
	}
	if d == 0 {
		return refusal{}
	}
	cs.emit(Event{Kind: EventPace, Target: t.name, Wait: d})
	if err := wait.For(ctx, d); err != nil {
		p.cancel(false)
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
