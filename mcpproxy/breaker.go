package mcpproxy

import (
	"math"
	"time"
)

// breaker is an upstream server's circuit breaker: the rules of the
// engine's breaker (resilience/breaker.go), whose transitions are
// unexported, over a record of its own. A failure rate over a sliding
// window opens it, never a run of failures; open, it refuses calls for its
// cooldown (p.InitialCooldown, doubled on each re-opening up to
// p.Cooldown), then admits one probe whose answer closes it and whose
// failure re-opens it. trip opens it at once (a server that can't start,
// crashed or hangs), as the engine does for a key-scope verdict. Every
// method takes the time explicitly; the upstream's mutex guards it.
type breaker struct {
	p         Breaker
	open      bool
	halfOpen  bool // the cooldown has ended: one probe may go
	probing   bool // the probe is in flight
	openUntil time.Time
	trips     int // openings since it last closed
	reason    string

	windowStart             time.Time
	calls, failures         int
	prevCalls, prevFailures int
}

// allow decides whether a call may start at now; probe reports it is the
// half-open probe (its outcome decides the state).
func (b *breaker) allow(now time.Time) (ok, probe bool) {
	if !b.open {
		return true, false
	}
	if now.Before(b.openUntil) {
		return false, false
	}
	b.halfOpen = true
	if b.probing {
		return false, false
	}
	b.probing = true
	return true, true
}

// success records an answer at now.
func (b *breaker) success(now time.Time, probe bool) {
	if b.open {
		if probe {
			b.reset()
		}
		return
	}
	b.roll(now)
	b.calls++
}

// failure records a transport failure or timeout at now; it opens the
// breaker when the window's failure rate calls for it.
func (b *breaker) failure(now time.Time, reason string, probe bool) {
	if b.open {
		if probe {
			b.probing = false
			b.trip(now, reason)
		}
		return
	}
	b.roll(now)
	b.calls++
	b.failures++
	calls, failures := b.counts(now)
	if failures >= float64(b.p.Failures) && beyondChance(failures, calls, b.p.FailureRatio) {
		b.trip(now, reason)
	}
}

// release returns the probe's slot without an outcome (the call was
// cancelled, or the tool answered with a protocol error).
func (b *breaker) release(probe bool) {
	if probe {
		b.probing = false
	}
}

// trip opens the breaker at now for the next cooldown.
func (b *breaker) trip(now time.Time, reason string) {
	b.trips++
	b.open, b.halfOpen, b.probing = true, false, false
	b.openUntil = now.Add(openFor(b.p, b.trips))
	b.reason = reason
	b.windowStart, b.calls, b.failures, b.prevCalls, b.prevFailures = time.Time{}, 0, 0, 0, 0
}

// reset closes the breaker (a probe answered; the server is up again
// after a clean start).
func (b *breaker) reset() {
	*b = breaker{p: b.p}
}

func (b *breaker) roll(now time.Time) {
	el := now.Sub(b.windowStart)
	switch {
	case b.windowStart.IsZero() || el >= 2*b.p.Window:
		b.windowStart, b.calls, b.failures, b.prevCalls, b.prevFailures = now, 0, 0, 0, 0
	case el >= b.p.Window:
		b.prevCalls, b.prevFailures = b.calls, b.failures
		b.calls, b.failures = 0, 0
		b.windowStart = b.windowStart.Add(b.p.Window)
	}
}

// counts estimates the calls and failures of the last window at now.
func (b *breaker) counts(now time.Time) (calls, failures float64) {
	w := 1 - float64(now.Sub(b.windowStart))/float64(b.p.Window)
	w = min(max(w, 0), 1)
	return float64(b.calls) + w*float64(b.prevCalls), float64(b.failures) + w*float64(b.prevFailures)
}

// beyondChance reports that count of calls is at least share of them by
// more than chance explains (two standard deviations of a binomial count),
// the engine's rule: at a ratio of 0.5 it takes 4 failures of 4 calls or 9
// of 10, and a server failing a third of its calls never opens it by luck.
func beyondChance(count, calls, share float64) bool {
	return count >= share*calls+2*math.Sqrt(calls*share*(1-share))
}

// openFor is the cooldown of the trips-th opening since the breaker last
// closed: p.InitialCooldown, doubled per re-opening, at most p.Cooldown.
func openFor(p Breaker, trips int) time.Duration {
	d := min(p.InitialCooldown, p.Cooldown)
	for i := 1; i < trips && d < p.Cooldown; i++ {
		d *= 2
	}
	return min(d, p.Cooldown)
}
