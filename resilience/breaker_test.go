package resilience

import (
	"testing"
	"time"

	"github.com/llmguard/llmguard/state"
)

func TestBreakerTransitions(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := breakerPolicy{failures: 3, window: 30 * time.Second, cooldown: time.Minute, probes: 2, minCalls: 1}
	var b state.Breaker

	for i := 0; i < 2; i++ {
		breakerFailure(&b, p, t0, "x")
	}
	if breakerState(&b) != state.Closed || b.Failures != 2 {
		t.Fatalf("after 2 failures: %+v", b)
	}
	breakerSuccess(&b, p, t0)
	if b.Failures != 0 {
		t.Fatalf("success did not reset the run: %+v", b)
	}
	for i := 0; i < 3; i++ {
		breakerFailure(&b, p, t0, "x")
	}
	if breakerState(&b) != state.Open || !b.OpenUntil.Equal(t0.Add(time.Minute)) {
		t.Fatalf("after 3 failures in a row: %+v", b)
	}
	if ok, _, _, reason := breakerAllow(&b, p, t0.Add(59*time.Second)); ok || reason != "breaker open" {
		t.Fatalf("open breaker admitted a call before its cooldown (reason %q)", reason)
	}
	// After the cooldown: half-open, exactly `probes` calls admitted.
	now := t0.Add(time.Minute)
	admitted := 0
	for range 5 {
		if ok, probe, _, _ := breakerAllow(&b, p, now); ok {
			if !probe {
				t.Fatal("half-open admitted a call that is not a probe")
			}
			admitted++
		}
	}
	if admitted != 2 || breakerState(&b) != state.HalfOpen {
		t.Fatalf("half-open admitted %d calls (state %s), want 2", admitted, breakerState(&b))
	}
	// A released probe frees its slot.
	breakerRelease(&b)
	if ok, _, _, _ := breakerAllow(&b, p, now); !ok {
		t.Fatal("released probe slot not reusable")
	}
	// A failing probe reopens for another cooldown.
	breakerFailure(&b, p, now, "y")
	if breakerState(&b) != state.Open || !b.OpenUntil.Equal(now.Add(time.Minute)) {
		t.Fatalf("failed probe: %+v", b)
	}
	// A succeeding probe closes.
	now = now.Add(time.Minute)
	if ok, _, _, _ := breakerAllow(&b, p, now); !ok {
		t.Fatal("no probe after second cooldown")
	}
	breakerSuccess(&b, p, now)
	if breakerState(&b) != state.Closed || b.Probes != 0 {
		t.Fatalf("successful probe did not close: %+v", b)
	}
}

func TestBreakerFailureRatio(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := breakerPolicy{failures: 100, ratio: 0.5, minCalls: 4, window: 10 * time.Second, cooldown: time.Minute, probes: 1}
	var b state.Breaker
	// success, failure, success, failure: ratio 0.5 over 4 calls opens.
	breakerSuccess(&b, p, t0)
	breakerFailure(&b, p, t0, "x")
	breakerSuccess(&b, p, t0)
	if breakerState(&b) != state.Closed {
		t.Fatal("opened before min_calls")
	}
	breakerFailure(&b, p, t0, "x")
	if breakerState(&b) != state.Open {
		t.Fatalf("ratio 2/4 >= 0.5 did not open: %+v", b)
	}
	// A new window forgets old calls.
	var c state.Breaker
	breakerFailure(&c, p, t0, "x")
	breakerSuccess(&c, p, t0)
	breakerSuccess(&c, p, t0.Add(11*time.Second))
	if c.WindowCalls != 1 || c.WindowFailures != 0 {
		t.Fatalf("window did not roll: %+v", c)
	}
}

func TestBreakerCooldownIsNotIllHealth(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := breakerPolicy{failures: 1, window: time.Second, cooldown: time.Minute, probes: 1, minCalls: 1}
	var b state.Breaker
	breakerCooldown(&b, t0.Add(2*time.Second))
	if breakerState(&b) != state.Closed || b.Failures != 0 {
		t.Fatalf("cooldown changed health: %+v", b)
	}
	if ok, _, _, reason := breakerAllow(&b, p, t0.Add(time.Second)); ok || reason != "rate-limit cooldown" {
		t.Fatalf("cooldown admitted a call (reason %q)", reason)
	}
	if ok, _, _, _ := breakerAllow(&b, p, t0.Add(2*time.Second)); !ok {
		t.Fatal("call refused after the cooldown")
	}
	// A shorter cooldown never shortens a longer one.
	if breakerCooldown(&b, t0.Add(time.Second)) {
		t.Fatal("shorter cooldown replaced a longer one")
	}
}
