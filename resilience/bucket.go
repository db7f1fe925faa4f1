package resilience

import (
	"fmt"
	"os"
	"time"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state"
)

// The pacing bucket's transitions: pure functions of a state.Pace and an
// explicit time, applied by a pacer to its own bucket or, inside
// Store.UpdateBreaker, to the one the engines sharing a store share.

func paceRate(b *state.Pace) float64 {
	if b.Rate <= 0 {
		return defaultPaceRate
	}
	return b.Rate
}

// paceAdvance brings b's tokens forward to now.
func paceAdvance(b *state.Pace, now time.Time) {
	if !b.Known {
		return
	}
	if !b.Full.IsZero() && !now.Before(b.Full) && !now.Before(b.Turn) {
		// The announced limit is whole again, and no call waits for a
		// turn granted from it (by any engine on the store): once, then
		// it refills at its rate until an answer announces more.
		b.Tokens, b.Full = max(b.Tokens, b.Size), time.Time{}
	} else if dt := now.Sub(b.At).Seconds(); dt > 0 {
		b.Tokens = min(b.Tokens+dt*paceRate(b), b.Size)
	}
	if now.After(b.At) { // another replica's clock may be ahead
		b.At = now
	}
}

// paceInForce reports whether b paces calls at now.
func paceInForce(b *state.Pace, now time.Time) bool { return b.Known || b.Spent.After(now) }

// paceReserve takes a turn from b at now, waiting at most maxWait (see
// pacer.reserve); not ok leaves the tokens as they were.
func paceReserve(b *state.Pace, now time.Time, maxWait time.Duration) (wait time.Duration, ok bool, next time.Time) {
	paceAdvance(b, now)
	d := max(b.Spent.Sub(now), 0)
	if b.Known {
		b.Tokens--
		if b.Tokens < 0 {
			gap := float64(time.Second) / paceRate(b)
			turn := time.Duration(-b.Tokens * gap)
			if !b.Full.IsZero() && !now.Before(b.Turn) {
				turn = min(turn, max(b.Full.Sub(now), 0))
			}
			// Turns come in the order they are given, a gap apart: one
			// given at a rate since raised would otherwise fall among
			// those given after it, and the calls the provider spread
			// tokens for arrive at once, more than its bucket holds.
			if b.Turn.After(now) {
				turn = max(turn, b.Turn.Sub(now)+time.Duration(gap))
			}
			d = max(d, turn)
		}
	}
	if d > maxWait {
		if b.Known {
			b.Tokens++
		}
		return 0, false, now.Add(d)
	}
	if t := now.Add(d); d > 0 && t.After(b.Turn) {
		b.Turn = t
	}
	return d, true, time.Time{}
}

// paceGiveBack gives b back, at now, a turn that was not used: its token,
// and its place among the turns waiting (the latest moves a gap earlier).
func paceGiveBack(b *state.Pace, now time.Time) {
	if !b.Known {
		return
	}
	b.Tokens++
	if b.Turn.After(now) {
		b.Turn = b.Turn.Add(-time.Duration(float64(time.Second) / paceRate(b)))
	}
}

// announces reports whether rl says anything the bucket takes.
func announces(rl *provider.RateLimit, now time.Time) bool {
	return rl != nil && (rl.Requests.Known || rl.Tokens.Known && rl.Tokens.Remaining == 0 && rl.Tokens.Reset.After(now))
}

// paceAnnounce sets b from an answer's announcement rl at now. The
// requests left are what it announced less the calls in flight (which the
// provider may not have counted yet) and those waiting; an announcement
// only lowers what the bucket allows, which then grows back at the
// announced rate. It reports whether b changed.
func paceAnnounce(b *state.Pace, rl *provider.RateLimit, now time.Time, inflight, pending int) bool {
	changed := false
	if q := rl.Tokens; q.Known && q.Remaining == 0 && q.Reset.After(now) {
		b.Spent, changed = q.Reset, true
	}
	q := rl.Requests
	if !q.Known {
		return changed
	}
	paceAdvance(b, now)
	left := float64(q.Remaining - inflight - pending)
	if !b.Known || left < b.Tokens {
		b.Tokens = left
	}
	b.Known = true
	if now.After(b.At) {
		b.At = now
	}
	// The bucket holds at least one request, so one that announced none
	// left and no limit (Azure) still lets one through as it refills.
	size := b.Size
	b.Size = max(float64(q.Limit), float64(q.Remaining), b.Size, 1)
	if q.Limit > 0 {
		b.Size = float64(q.Limit)
	}
	b.Full = q.Reset
	// The rate is the requests used over the time until the limit is whole
	// again. A reset in whole seconds (Anthropic's RFC 3339 time) errs by
	// up to a second, which skews the rate the more the fewer were used:
	// it is measured from the announcement that used the most, the latest
	// of those, until the limit changes.
	used := q.Limit - q.Remaining
	if d := q.Reset.Sub(now).Seconds(); used > 0 && d > 0 && (used >= b.Used || b.Size != size) {
		b.Rate, b.Used = float64(used)/d, used
	}
	if os.Getenv("PACEDBG") != "" {
		fmt.Fprintf(os.Stderr, "announce now=%s lim=%d rem=%d reset=%s inflight=%d pending=%d -> tokens=%.2f rate=%.2f\n", now.Format("05.000"), q.Limit, q.Remaining, q.Reset.Format("05.000"), inflight, pending, b.Tokens, b.Rate)
	}
	return true
}
