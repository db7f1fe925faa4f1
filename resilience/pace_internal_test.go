package resilience

import (
	"testing"
	"time"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state"
)

func TestPacer(t *testing.T) {
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	var p pacer
	for range 5 { // knowing nothing, it lets every call through
		if d, ok, _ := p.reserve(now, 0, false); !ok || d != 0 {
			t.Fatalf("unknown pacer: wait %v ok %v", d, ok)
		}
	}
	for range 4 {
		p.done(nil, now)
	}
	// 2 of 10 left, whole again in 8 s: one request a second comes back.
	// The fifth call is still in flight: it is not counted in the 2.
	p.done(&provider.RateLimit{Requests: provider.Quota{Limit: 10, Remaining: 2, Known: true, Reset: now.Add(8 * time.Second)}}, now)
	for i, want := range []time.Duration{0, 0, time.Second, 2 * time.Second} {
		d, ok, _ := p.reserve(now, 5*time.Second, false)
		if !ok || d != want {
			t.Errorf("call %d: wait %v ok %v, want %v", i, d, ok, want)
		}
	}
	if _, ok, next := p.reserve(now, 2500*time.Millisecond, false); ok || !next.Equal(now.Add(3*time.Second)) {
		t.Errorf("a turn 3 s away within 2.5 s: ok %v next %v", ok, next)
	}
	p.started()
	p.cancel(now, false, false) // one waiting call gives up: its turn goes to the next
	if d, ok, _ := p.reserve(now, 5*time.Second, false); !ok || d != 2*time.Second {
		t.Errorf("after a cancel: wait %v ok %v, want 2s", d, ok)
	}
	// An announcement of more than the pacer allows does not raise it.
	p.done(&provider.RateLimit{Requests: provider.Quota{Limit: 10, Remaining: 9, Known: true, Reset: now.Add(time.Second)}}, now)
	if d, _, _ := p.reserve(now, 5*time.Second, false); d == 0 {
		t.Error("an announcement raised what the pacer allows")
	}

	// The token limit spent until a reset: every call waits for it.
	var q pacer
	q.reserve(now, 0, false)
	q.done(&provider.RateLimit{Tokens: provider.Quota{Remaining: 0, Known: true, Reset: now.Add(3 * time.Second)}}, now)
	if _, ok, next := q.reserve(now, time.Second, false); ok || !next.Equal(now.Add(3*time.Second)) {
		t.Errorf("tokens spent, 1 s max wait: ok %v next %v", ok, next)
	}
	if d, ok, _ := q.reserve(now, 5*time.Second, false); !ok || d != 3*time.Second {
		t.Errorf("tokens spent, 5 s max wait: wait %v ok %v", d, ok)
	}
	if d, ok, _ := q.reserve(now.Add(4*time.Second), 0, false); !ok || d != 0 {
		t.Errorf("after the reset: wait %v ok %v", d, ok)
	}

	// Azure announces only what is left: none left, no limit, no reset.
	// One request comes back a second (defaultPaceRate).
	var az pacer
	az.reserve(now, 0, false)
	az.done(&provider.RateLimit{Requests: provider.Quota{Remaining: 0, Known: true}}, now)
	if d, ok, _ := az.reserve(now, 5*time.Second, false); !ok || d != time.Second {
		t.Errorf("none left, nothing else said: wait %v ok %v, want 1s", d, ok)
	}
	az.started()
	az.done(nil, now.Add(time.Second))
	if d, ok, _ := az.reserve(now.Add(10*time.Second), 0, false); !ok || d != 0 {
		t.Errorf("10 s later: wait %v ok %v, want a turn now", d, ok)
	}
}

// TestPacerWholeOnce: the bucket is whole again at the announced reset,
// once: a burst after it gets the limit's requests, not one each (every
// turn took a bucket filled anew until an answer announced a new reset).
func TestPacerWholeOnce(t *testing.T) {
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	var w pacer
	w.reserve(now, 0, false)
	w.done(&provider.RateLimit{Requests: provider.Quota{Limit: 3, Remaining: 0, Known: true, Reset: now.Add(time.Second)}}, now)
	later, now3 := now.Add(2*time.Second), 0
	for range 10 {
		if d, ok, _ := w.reserve(later, 0, false); ok && d == 0 {
			now3++
		}
	}
	if now3 != 3 {
		t.Errorf("a burst after the reset: %d sent at once, want the limit's 3", now3)
	}
}

// TestPaceRateWholeSeconds: Anthropic's reset is an RFC 3339 time in
// whole seconds, so an answer that used one request of a limit of 11 a
// second says the limit is whole again in a second, as one that used all
// 11 does. The rate is measured from the announcement that used the most
// (its second of rounding errs least), not from the latest: after a burst
// used the limit up, announcements of 1 or 3 used do not drop the rate to
// 1 or 3 a second (which held a queue of 50 calls for 50 s, past their
// queue timeout, where 11 a second serves them in under 5 s).
func TestPaceRateWholeSeconds(t *testing.T) {
	at := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	announce := func(b *state.Pace, now time.Duration, limit, remaining int, reset time.Duration) {
		q := provider.Quota{Limit: limit, Remaining: remaining, Known: true, Reset: at.Add(reset)}
		paceAnnounce(b, &provider.RateLimit{Requests: q}, at.Add(now), 0, 0)
	}
	tests := []struct {
		name string
		seq  func(b *state.Pace)
		want float64
	}{
		{"the burst's last announcement", func(b *state.Pace) {
			for rem := 10; rem >= 0; rem-- {
				announce(b, 0, 11, rem, time.Second)
			}
		}, 11},
		{"fewer used, later", func(b *state.Pace) {
			announce(b, 0, 11, 0, time.Second)
			announce(b, 500*time.Millisecond, 11, 4, 2*time.Second)
			announce(b, time.Second, 11, 8, 2*time.Second)
			announce(b, 2*time.Second, 11, 10, 3*time.Second)
		}, 11},
		{"as many used, later", func(b *state.Pace) {
			announce(b, 0, 11, 0, time.Second)
			announce(b, 3*time.Second, 11, 0, 5*time.Second)
		}, 5.5},
		{"a new limit", func(b *state.Pace) {
			announce(b, 0, 11, 0, time.Second)
			announce(b, time.Second, 60, 58, 3*time.Second)
		}, 2 / 2.0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b state.Pace
			tc.seq(&b)
			if b.Rate != tc.want {
				t.Errorf("rate %v a second, want %v", b.Rate, tc.want)
			}
		})
	}
}
