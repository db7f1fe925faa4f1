package resilience

import (
	"math"
	"time"

	"github.com/llmguard/llmguard/state"
)

// Breaker transitions. Each is a pure function of a record, a policy and an
// explicit time, reporting whether it changed the record; the engine applies
// them inside state.Store.UpdateBreaker so each is atomic per key.
//
// A target's breaker opens on a failure rate: over a sliding window of
// p.window, at least p.minCalls calls, at least p.failures of them ill
// health, and a failed share of at least p.ratio beyond chance (see
// beyondChance). Never on a run of failures: at a thousand calls a second
// a run of five comes by chance every few hundred calls. Open, it refuses
// calls for its cooldown (p.initial, doubled on each re-opening up to
// p.cooldown), then half-opens and admits at least p.probes probes at once,
// more in proportion to the calls asking; the first probe to succeed closes
// it, p.probes failed probes without a success re-open it. Rate limits are
// not ill health: they put the target in a cooldown for every caller only
// when most of the window's calls were rate limited (a chance majority costs
// a second's wait, not an outage), and even then one call per cooldownPace
// goes through.

const (
	// cooldownPace is how often a call goes through a rate-limit cooldown.
	cooldownPace = time.Second
	// probeRecheck is when a call refused because the half-open probes
	// are in flight may ask again.
	probeRecheck = time.Second
	// probeShare: half-open admits one probe per this many calls asking
	// (at least p.probes at once).
	probeShare = 10
)

// breakerState names a record's state, treating "" as closed.
func breakerState(b *state.Breaker) string {
	if b.State == "" {
		return state.Closed
	}
	return b.State
}

// breakerQuiet reports that a record needs no transition for a call at now:
// closed, no cooldown. The engine then admits without writing.
func breakerQuiet(b *state.Breaker, now time.Time) bool {
	return breakerState(b) == state.Closed && !now.Before(b.CooldownUntil)
}

// breakerAllow decides whether a call may start at now. probe reports the
// caller was admitted as a half-open probe (its report decides the state);
// reason says why a call was refused.
func breakerAllow(b *state.Breaker, p breakerPolicy, now time.Time) (ok, probe, changed bool, reason string) {
	switch breakerState(b) {
	case state.Open:
		if now.Before(b.OpenUntil) {
			return false, false, false, "breaker open"
		}
		b.State = state.HalfOpen
		b.Probes, b.Asked, b.ProbeFailures = 0, 0, 0
		b.Generation++
		fallthrough
	case state.HalfOpen:
		if b.Probes > 0 && now.Sub(b.OpenUntil) > p.cooldown {
			b.Probes = 0 // probes that never reported (a replica that died): lost
		}
		b.Asked++
		if b.Probes >= probeLimit(b, p) {
			return false, false, true, "breaker half-open, probes in flight"
		}
		b.Probes++
		return true, true, true, ""
	}
	if now.Before(b.CooldownUntil) {
		if now.Before(b.PaceAt) {
			return false, false, false, "rate-limit cooldown"
		}
		b.PaceAt = now.Add(cooldownPace)
		return true, false, true, ""
	}
	return true, false, false, ""
}

// beyondChance reports that count of calls is at least share of them by
// more than chance explains: two standard deviations of a binomial count
// above share·calls. At 20 calls a 50% trigger then needs 15 failures, at
// 1000 calls 532; an upstream failing 30% of calls (a flaky network) never
// opens it by luck, while a dead one still opens it after min_calls calls.
func beyondChance(count, calls, share float64) bool {
	return count >= share*calls+2*math.Sqrt(calls*share*(1-share))
}

// probeLimit is how many probes a half-open breaker lets run at once: one per
// probeShare calls that asked, at least p.probes, at most p.minCalls.
func probeLimit(b *state.Breaker, p breakerPolicy) int {
	return max(p.probes, min(b.Asked/probeShare, p.minCalls))
}

// refusedUntil is when a call breakerAllow refused at now may ask again: an
// open breaker's OpenUntil, a probe recheck while half-open, or the end of a
// rate-limit cooldown (rateLimited: what the server asked for; its paced
// calls are for whoever asks at the right moment); zero when not refused.
func refusedUntil(b *state.Breaker, now time.Time) (until time.Time, rateLimited bool) {
	switch breakerState(b) {
	case state.Open:
		if now.Before(b.OpenUntil) {
			return b.OpenUntil, false
		}
		return time.Time{}, false
	case state.HalfOpen:
		return now.Add(probeRecheck), false
	}
	if now.Before(b.CooldownUntil) {
		return b.CooldownUntil, true
	}
	return time.Time{}, false
}

// rollWindow moves the window's buckets forward to now.
func rollWindow(b *state.Breaker, p breakerPolicy, now time.Time) {
	el := now.Sub(b.WindowStart)
	switch {
	case b.WindowStart.IsZero() || el >= 2*p.window:
		resetWindow(b)
		b.WindowStart = now
	case el >= p.window:
		b.PrevCalls, b.PrevFailures, b.PrevRateLimited = b.WindowCalls, b.WindowFailures, b.WindowRateLimited
		b.WindowCalls, b.WindowFailures, b.WindowRateLimited = 0, 0, 0
		b.WindowStart = b.WindowStart.Add(p.window)
	}
}

func resetWindow(b *state.Breaker) {
	b.WindowStart = time.Time{}
	b.WindowCalls, b.WindowFailures, b.WindowRateLimited = 0, 0, 0
	b.PrevCalls, b.PrevFailures, b.PrevRateLimited = 0, 0, 0
}

// windowCounts estimates the calls, ill-health failures and rate limits
// reported over the last p.window at now (after rollWindow).
func windowCounts(b *state.Breaker, p breakerPolicy, now time.Time) (calls, failures, limited float64) {
	w := 1 - float64(now.Sub(b.WindowStart))/float64(p.window)
	w = min(max(w, 0), 1)
	return float64(b.WindowCalls) + w*float64(b.PrevCalls),
		float64(b.WindowFailures) + w*float64(b.PrevFailures),
		float64(b.WindowRateLimited) + w*float64(b.PrevRateLimited)
}

// openFor is the cooldown of the trips-th opening since the breaker last
// closed: p.initial, doubled per re-opening, at most p.cooldown.
func openFor(p breakerPolicy, trips int) time.Duration {
	d := min(p.initial, p.cooldown)
	for i := 1; i < trips && d < p.cooldown; i++ {
		d *= 2
	}
	return min(d, p.cooldown)
}

// tripOpen opens the breaker until until.
func tripOpen(b *state.Breaker, until time.Time, reason string) {
	b.State = state.Open
	b.OpenUntil = until
	b.Probes, b.Asked, b.ProbeFailures = 0, 0, 0
	resetWindow(b)
	b.Reason = reason
	b.Fault = state.Fault{}
	b.Generation++
}

// breakerSuccess records a success at now. probe says the call was admitted
// as a probe of the record's current half-open state: it closes the
// breaker. A closed breaker counts the call, and a success ends a
// rate-limit cooldown.
func breakerSuccess(b *state.Breaker, p breakerPolicy, now time.Time, probe bool) bool {
	switch breakerState(b) {
	case state.HalfOpen:
		if !probe {
			return false // admitted before the breaker opened: says nothing of now
		}
		b.State = state.Closed
		b.Probes, b.Asked, b.ProbeFailures, b.Trips = 0, 0, 0, 0
		b.OpenUntil = time.Time{}
		resetWindow(b)
		b.Reason = ""
		b.Fault = state.Fault{}
		b.Generation++
		return true
	case state.Closed:
		rollWindow(b, p, now)
		b.WindowCalls++
		if !b.CooldownUntil.IsZero() {
			b.CooldownUntil, b.PaceAt = time.Time{}, time.Time{}
		}
		return true
	}
	return false // open: a late success from before it opened
}

// breakerFailure records an ill-health failure at now: p.probes failed
// half-open probes (with no success, which would have closed it) re-open
// the breaker for a doubled cooldown; a closed breaker counts it and opens
// when the window's failure rate calls for it.
func breakerFailure(b *state.Breaker, p breakerPolicy, now time.Time, reason string, probe bool) bool {
	switch breakerState(b) {
	case state.HalfOpen:
		if !probe {
			return false
		}
		b.Probes = max(b.Probes-1, 0)
		b.ProbeFailures++
		if b.ProbeFailures >= p.probes {
			b.Trips++
			tripOpen(b, now.Add(openFor(p, b.Trips)), reason)
		}
		return true
	case state.Closed:
		rollWindow(b, p, now)
		b.WindowCalls++
		b.WindowFailures++
		if calls, failures, _ := windowCounts(b, p, now); p.ratio > 0 && calls >= float64(p.minCalls) &&
			failures >= float64(p.failures) && beyondChance(failures, calls, p.ratio) {
			b.Trips++
			tripOpen(b, now.Add(openFor(p, b.Trips)), reason)
		}
		return true
	}
	return false
}

// breakerRateLimited records a rate limit at now whose wait hint is wait:
// not ill health. A half-open probe's slot is returned; a closed breaker
// counts it, and when most of the window's calls were rate limited every
// caller waits until now+wait (at least cooldownPace), one call per
// cooldownPace excepted.
func breakerRateLimited(b *state.Breaker, p breakerPolicy, now time.Time, wait time.Duration, probe bool) bool {
	switch breakerState(b) {
	case state.HalfOpen:
		return probe && breakerRelease(b)
	case state.Closed:
		rollWindow(b, p, now)
		b.WindowCalls++
		b.WindowRateLimited++
		if calls, _, limited := windowCounts(b, p, now); calls >= float64(p.minCalls) && 2*limited > calls {
			if !now.Before(b.CooldownUntil) {
				b.PaceAt = now.Add(cooldownPace)
			}
			if until := now.Add(max(wait, cooldownPace)); until.After(b.CooldownUntil) {
				b.CooldownUntil = until
			}
		}
		return true
	}
	return false
}

// breakerServerWait records that a server asked the call of engine by to
// keep off until until (a rate limit's retry-after or reset): the record's
// WaitUntil only moves later, so a shorter wait seen after a longer one
// never ends it early. Engines other than by prefer other targets until
// then (see deferWaited); by's own calls are judged by the window as above.
func breakerServerWait(b *state.Breaker, until time.Time, by string) bool {
	if !until.After(b.WaitUntil) {
		return false
	}
	b.WaitUntil, b.WaitBy = until, by
	return true
}

// breakerOpenKey opens a key's breaker at once on a key-scope verdict (bad
// key, no credit): until until when the provider said when the quota
// resets, else for the next cooldown. An open breaker keeps its cooldown
// but takes a later known reset.
func breakerOpenKey(b *state.Breaker, p breakerPolicy, now, until time.Time, reason string) bool {
	if breakerState(b) == state.Open {
		if until.After(b.OpenUntil) {
			b.OpenUntil = until
			return true
		}
		return false
	}
	b.Trips++
	if !until.After(now) {
		until = now.Add(openFor(p, b.Trips))
	}
	tripOpen(b, until, reason)
	return true
}

// breakerRelease returns a half-open probe slot without an outcome (a
// request-scope failure, a cancelled call, a rate limit).
func breakerRelease(b *state.Breaker) bool {
	if breakerState(b) == state.HalfOpen && b.Probes > 0 {
		b.Probes--
		return true
	}
	return false
}
