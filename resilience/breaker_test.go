package resilience

import (
	"testing"
	"time"

	"github.com/llmguard/llmguard/state"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// defaultBreaker is the breaker policy of a route with every default.
func defaultBreaker() breakerPolicy { return resolveBreaker(&Breaker{}) }

// outcomes reports pattern's outcomes to b, one per millisecond from at: 'f'
// an ill-health failure, 'r' a rate limit, anything else a success. It
// returns the time after the last.
func outcomes(b *state.Breaker, p breakerPolicy, at time.Time, pattern string) time.Time {
	for _, c := range pattern {
		switch c {
		case 'f':
			breakerFailure(b, p, at, "x", false)
		case 'r':
			breakerRateLimited(b, p, at, 2*time.Second, false)
		default:
			breakerSuccess(b, p, at, false)
		}
		at = at.Add(time.Millisecond)
	}
	return at
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

func TestBreakerOpensOnRateNotRun(t *testing.T) {
	p := defaultBreaker()
	tests := []struct {
		name    string
		pattern string
		open    bool
	}{
		{"19 failures are fewer than min_calls", repeat("f", 19), false},
		{"20 failures of 20 calls", repeat("f", 20), true},
		// The old trigger: 5 failures in a row opened the breaker. Among
		// concurrent calls to a flaky upstream such runs come by chance.
		{"runs of 8 failures in a 30% failure rate", repeat("fffffffsssssssssssssssssf", 40), false},
		{"30% failures, evenly", repeat("fss", 400), false},
		{"half failing at 20 calls is within chance", repeat("sf", 10), false},
		{"40% failing over 1000 calls", repeat("sfsfs", 200), false},
		{"60% failures over 500 calls", repeat("fffss", 100), true},
		{"a dead upstream after a healthy minute", repeat("s", 2000) + repeat("f", 200), false},
		{"a dead upstream after a healthy minute, for longer", repeat("s", 2000) + repeat("f", 2300), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b state.Breaker
			outcomes(&b, p, t0, tt.pattern)
			if got := breakerState(&b) == state.Open; got != tt.open {
				t.Errorf("open = %v, want %v (%+v)", got, tt.open, b)
			}
		})
	}
	t.Run("failures floor", func(t *testing.T) {
		q := p
		q.minCalls, q.failures = 1, 5
		var b state.Breaker
		outcomes(&b, q, t0, "ffff")
		if breakerState(&b) != state.Closed {
			t.Fatalf("opened on 4 failures with failures: 5")
		}
		outcomes(&b, q, t0, "f")
		if breakerState(&b) != state.Open {
			t.Fatalf("5 failures of 5 calls did not open: %+v", b)
		}
	})
	t.Run("failure_ratio 0 never opens", func(t *testing.T) {
		q := p
		q.ratio = 0
		var b state.Breaker
		outcomes(&b, q, t0, repeat("f", 100))
		if breakerState(&b) != state.Closed {
			t.Fatalf("opened with failure_ratio 0")
		}
	})
}

func TestBreakerWindowSlides(t *testing.T) {
	p := defaultBreaker() // 10s window
	var b state.Breaker
	outcomes(&b, p, t0, repeat("f", 15)) // 15 of 15: fewer than min_calls
	// 15s later the first bucket is the previous one, half inside the window.
	at := t0.Add(15 * time.Second)
	rollWindow(&b, p, at)
	calls, failures, _ := windowCounts(&b, p, at)
	if calls < 7 || calls > 8 || failures != calls {
		t.Errorf("after 15s: %.1f calls, %.1f failures; want about 7.5 each", calls, failures)
	}
	// Five failures more: 12.5 of 12.5 calls, still fewer than 20.
	outcomes(&b, p, at, "fffff")
	if breakerState(&b) != state.Closed {
		t.Fatalf("opened on old failures: %+v", b)
	}
	// Two windows later everything is forgotten.
	at = at.Add(25 * time.Second)
	rollWindow(&b, p, at)
	if calls, _, _ := windowCounts(&b, p, at); calls != 0 {
		t.Errorf("after 2 windows: %.1f calls, want 0", calls)
	}
}

// trip opens b with 20 failures at at.
func trip(t *testing.T, b *state.Breaker, p breakerPolicy, at time.Time) {
	t.Helper()
	for range 20 {
		breakerFailure(b, p, at, "529 overloaded", false)
	}
	if breakerState(b) != state.Open {
		t.Fatalf("not open after 20 failures: %+v", b)
	}
}

// probe admits one probe at at and reports it, ok or not.
func probe(t *testing.T, b *state.Breaker, p breakerPolicy, at time.Time, ok bool) {
	t.Helper()
	admitted, isProbe, _, reason := breakerAllow(b, p, at)
	if !admitted || !isProbe {
		t.Fatalf("at %v: no probe admitted (%q): %+v", at.Sub(t0), reason, b)
	}
	if ok {
		breakerSuccess(b, p, at, true)
	} else {
		breakerFailure(b, p, at, "500", true)
	}
}

func TestBreakerCooldownDoubles(t *testing.T) {
	p := defaultBreaker() // initial 5s, at most 60s, 3 probes
	var b state.Breaker
	trip(t, &b, p, t0)
	at := t0
	for _, want := range []time.Duration{5, 10, 20, 40, 60, 60} {
		want *= time.Second
		if got := b.OpenUntil.Sub(at); got != want {
			t.Fatalf("trip %d: open for %v, want %v", b.Trips, got, want)
		}
		if ok, _, _, reason := breakerAllow(&b, p, b.OpenUntil.Add(-time.Millisecond)); ok || reason != "breaker open" {
			t.Fatalf("admitted before the cooldown ended (%q)", reason)
		}
		at = b.OpenUntil
		for range p.probes {
			probe(t, &b, p, at, false)
		}
	}
	// A probe that succeeds closes it, and the next trip starts at 5s again.
	probe(t, &b, p, b.OpenUntil, true)
	if breakerState(&b) != state.Closed || b.Trips != 0 {
		t.Fatalf("a successful probe did not close: %+v", b)
	}
	at = b.OpenUntil.Add(time.Minute)
	trip(t, &b, p, at)
	if got := b.OpenUntil.Sub(at); got != 5*time.Second {
		t.Errorf("after a close: open for %v, want 5s", got)
	}
}

func TestBreakerHalfOpen(t *testing.T) {
	p := defaultBreaker()
	p.probes = 2
	var b state.Breaker
	trip(t, &b, p, t0)
	at := b.OpenUntil
	admitted := 0
	for range 5 {
		if ok, isProbe, _, _ := breakerAllow(&b, p, at); ok {
			if !isProbe {
				t.Fatal("half-open admitted a call that is not a probe")
			}
			admitted++
		}
	}
	if admitted != 2 || breakerState(&b) != state.HalfOpen {
		t.Fatalf("half-open admitted %d calls (state %s), want 2", admitted, breakerState(&b))
	}
	if until, _ := refusedUntil(&b, at); !until.Equal(at.Add(probeRecheck)) {
		t.Errorf("refused until %v, want a recheck after %v", until.Sub(at), probeRecheck)
	}
	// Under load more probes go through: one per probeShare calls asking.
	for range 40 {
		breakerAllow(&b, p, at)
	}
	if b.Probes != 4 {
		t.Errorf("%d probes in flight after %d calls asked, want 4", b.Probes, b.Asked)
	}
	// A late report from a call admitted before the breaker opened says
	// nothing about now.
	gen := b.Generation
	breakerFailure(&b, p, at, "late", false)
	breakerSuccess(&b, p, at, false)
	if breakerState(&b) != state.HalfOpen || b.Generation != gen {
		t.Fatalf("a non-probe report changed the half-open breaker: %+v", b)
	}
	// One failed probe of two allowed: still half-open; a released slot
	// is reusable.
	breakerFailure(&b, p, at, "500", true)
	if breakerState(&b) != state.HalfOpen {
		t.Fatalf("one failed probe of %d re-opened: %+v", p.probes, b)
	}
	n := b.Probes
	breakerRelease(&b)
	if b.Probes != n-1 {
		t.Fatalf("release did not free a slot: %+v", b)
	}
	// Probes that never report are written off after a cooldown.
	later := at.Add(p.cooldown + time.Second)
	if ok, _, _, _ := breakerAllow(&b, p, later); !ok || b.Probes != 1 {
		t.Fatalf("lost probes still block: %+v", b)
	}
	breakerSuccess(&b, p, later, true)
	if breakerState(&b) != state.Closed || b.Probes != 0 || b.Reason != "" {
		t.Fatalf("a successful probe did not close: %+v", b)
	}
}

func TestBreakerRateLimits(t *testing.T) {
	p := defaultBreaker()
	t.Run("a minority of rate limits shuts nobody out", func(t *testing.T) {
		var b state.Breaker
		at := outcomes(&b, p, t0, repeat("rss", 100))
		if !breakerQuiet(&b, at) || breakerState(&b) != state.Closed || b.WindowFailures != 0 {
			t.Fatalf("30%% rate limits changed the breaker: %+v", b)
		}
	})
	t.Run("most calls rate limited: a cooldown with one call per interval", func(t *testing.T) {
		var b state.Breaker
		at := outcomes(&b, p, t0, repeat("r", 30))
		if breakerState(&b) != state.Closed || !at.Before(b.CooldownUntil) {
			t.Fatalf("no cooldown after 30 rate limits in a row: %+v", b)
		}
		if got := b.CooldownUntil.Sub(at); got < time.Second || got > 2*time.Second {
			t.Errorf("cooldown ends in %v, want the 2s hint", got)
		}
		if ok, _, _, reason := breakerAllow(&b, p, at); ok || reason != "rate-limit cooldown" {
			t.Fatalf("admitted during the cooldown (%q)", reason)
		}
		if until, rl := refusedUntil(&b, at); !rl || !until.Equal(b.CooldownUntil) {
			t.Errorf("refused until %v (rate limited %v), want the cooldown's end", until, rl)
		}
		paced := b.PaceAt
		if ok, _, _, _ := breakerAllow(&b, p, paced); !ok {
			t.Fatal("the paced call was refused")
		}
		if ok, _, _, _ := breakerAllow(&b, p, paced); ok {
			t.Fatal("two calls in one pace interval")
		}
		// The paced call succeeds: the cooldown is over for everyone.
		breakerSuccess(&b, p, paced, false)
		if !breakerQuiet(&b, paced) {
			t.Fatalf("a success did not end the cooldown: %+v", b)
		}
	})
	t.Run("a probe's rate limit returns its slot", func(t *testing.T) {
		var b state.Breaker
		trip(t, &b, p, t0)
		breakerAllow(&b, p, b.OpenUntil)
		breakerRateLimited(&b, p, b.OpenUntil, time.Second, true)
		if breakerState(&b) != state.HalfOpen || b.Probes != 0 || b.ProbeFailures != 0 {
			t.Fatalf("a rate-limited probe counted as ill health: %+v", b)
		}
	})
}

func TestKeyBreaker(t *testing.T) {
	p := defaultBreaker()
	var b state.Breaker
	// A bad key opens at once for the first cooldown.
	breakerOpenKey(&b, p, t0, time.Time{}, "401 invalid x-api-key")
	if breakerState(&b) != state.Open || !b.OpenUntil.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("bad key: %+v", b)
	}
	// Further reports while open keep its cooldown; a later known reset wins.
	if breakerOpenKey(&b, p, t0, time.Time{}, "401") {
		t.Error("a second report moved the cooldown")
	}
	reset := t0.Add(time.Hour)
	breakerOpenKey(&b, p, t0, reset, "429 insufficient_quota")
	if !b.OpenUntil.Equal(reset) {
		t.Errorf("open until %v, want the quota reset", b.OpenUntil)
	}
	// Its probe fails again: the next cooldown is doubled.
	var c state.Breaker
	breakerOpenKey(&c, p, t0, time.Time{}, "401")
	at := c.OpenUntil
	breakerAllow(&c, p, at)
	breakerOpenKey(&c, p, at, time.Time{}, "401")
	if got := c.OpenUntil.Sub(at); got != 10*time.Second {
		t.Errorf("re-opened for %v, want 10s", got)
	}
}

func TestOpenFor(t *testing.T) {
	p := breakerPolicy{initial: 5 * time.Second, cooldown: 8 * time.Second}
	for trips, want := range map[int]time.Duration{1: 5 * time.Second, 2: 8 * time.Second, 40: 8 * time.Second} {
		if got := openFor(p, trips); got != want {
			t.Errorf("openFor(%d) = %v, want %v", trips, got, want)
		}
	}
	// An old config's short cooldown caps the first opening too.
	if got := openFor(breakerPolicy{initial: 5 * time.Second, cooldown: time.Second}, 1); got != time.Second {
		t.Errorf("cooldown 1s: first opening %v, want 1s", got)
	}
}

// A server-requested wait only moves later: a shorter one seen after a
// longer one does not end it early, and a longer one names its engine.
func TestBreakerServerWaitExtends(t *testing.T) {
	var b state.Breaker
	if !breakerServerWait(&b, t0.Add(30*time.Second), "A") || b.WaitUntil != t0.Add(30*time.Second) || b.WaitBy != "A" {
		t.Fatalf("first wait: %+v", b)
	}
	if breakerServerWait(&b, t0.Add(5*time.Second), "B") || b.WaitUntil != t0.Add(30*time.Second) || b.WaitBy != "A" {
		t.Errorf("a shorter wait changed the record: %+v", b)
	}
	if !breakerServerWait(&b, t0.Add(40*time.Second), "B") || b.WaitUntil != t0.Add(40*time.Second) || b.WaitBy != "B" {
		t.Errorf("a longer wait did not extend it: %+v", b)
	}
}
