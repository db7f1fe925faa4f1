package resilience

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
)

// TestRetryAtWhenNothingWasTried: a call that tries nothing because its
// targets are cooling down or open still says when to come back, and is
// "all rate limited" exactly when every refusal is a rate-limit cooldown.
func TestRetryAtWhenNothingWasTried(t *testing.T) {
	keyRL := perr(classify.RateLimited, 429, classify.ScopeKey, true, true, 9*time.Second)
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) // a bubble starts at this moment
	tests := []struct {
		name    string
		targets []string
		// prime scripts the adapters; one primed call then sets the state.
		prime func(h *harness)
		// advance is fake time between the primed call and the measured one
		// (under a second for cooldowns: then one paced call goes through).
		advance     time.Duration
		wantRetryAt time.Time
		wantAllRL   bool
		wantSkipped []Skip
		wantErr     error
	}{{
		name:    "target cooldown",
		targets: []string{"a/m1"},
		prime:   func(h *harness) { h.ads["a"].on("m1", reply{err: rateLimited(7 * time.Second)}) },
		advance: 500 * time.Millisecond, wantRetryAt: t0.Add(7 * time.Second), wantAllRL: true,
		wantSkipped: []Skip{{Target: "a/m1", Reason: "rate-limit cooldown", Until: t0.Add(7 * time.Second), RateLimited: true}},
		wantErr:     ErrNoTarget,
	}, {
		name:    "earliest of two cooldowns",
		targets: []string{"a/m1", "b/m2"},
		prime: func(h *harness) {
			h.ads["a"].on("m1", reply{err: rateLimited(7 * time.Second)})
			h.ads["b"].on("m2", reply{err: rateLimited(3 * time.Second)})
		},
		advance: 500 * time.Millisecond, wantRetryAt: t0.Add(3 * time.Second), wantAllRL: true,
		wantSkipped: []Skip{
			{Target: "a/m1", Reason: "rate-limit cooldown", Until: t0.Add(7 * time.Second), RateLimited: true},
			{Target: "b/m2", Reason: "rate-limit cooldown", Until: t0.Add(3 * time.Second), RateLimited: true},
		},
		wantErr: ErrNoTarget,
	}, {
		name:    "key-wide cooldown",
		targets: []string{"a/m1"},
		prime:   func(h *harness) { h.ads["a"].on("m1", reply{err: keyRL}) },
		advance: 500 * time.Millisecond, wantRetryAt: t0.Add(9 * time.Second), wantAllRL: true,
		wantSkipped: []Skip{{Target: "a/m1", Reason: "key a: rate-limit cooldown", Until: t0.Add(9 * time.Second), RateLimited: true}},
		wantErr:     ErrNoTarget,
	}, {
		name:    "open breaker",
		targets: []string{"a/m1"},
		prime:   func(h *harness) { h.ads["a"].on("m1", reply{err: errServer}) },
		advance: 10 * time.Second, wantRetryAt: t0.Add(30 * time.Second), wantAllRL: false,
		wantSkipped: []Skip{{Target: "a/m1", Reason: "breaker open", Until: t0.Add(30 * time.Second)}},
		wantErr:     ErrNoTarget,
	}, {
		name:    "key quota until its reset",
		targets: []string{"a/m1"},
		prime:   func(h *harness) { h.ads["a"].on("m1", reply{err: quota(t0.Add(time.Hour))}) },
		advance: time.Minute, wantRetryAt: t0.Add(time.Hour), wantAllRL: false,
		wantSkipped: []Skip{{Target: "a/m1", Reason: "key a: breaker open", Until: t0.Add(time.Hour), Since: t0,
			Fault: &provider.Error{Provider: "a", Model: "m1", Verdict: classify.Verdict{Status: 429, Class: classify.QuotaExhausted,
				Scope: classify.ScopeKey, Fallback: true, RequestID: "req_quota_exhausted_429", Message: "429 quota_exhausted", Until: t0.Add(time.Hour)}}}},
		wantErr: ErrNoTarget,
	}, {
		name:    "cooldown and open breaker: earliest, not all rate limited",
		targets: []string{"a/m1", "b/m2"},
		prime: func(h *harness) {
			h.ads["a"].on("m1", reply{err: rateLimited(50 * time.Second)})
			h.ads["b"].on("m2", reply{err: errServer})
		},
		advance: 500 * time.Millisecond, wantRetryAt: t0.Add(30 * time.Second), wantAllRL: false,
		wantSkipped: []Skip{
			{Target: "a/m1", Reason: "rate-limit cooldown", Until: t0.Add(50 * time.Second), RateLimited: true},
			{Target: "b/m2", Reason: "breaker open", Until: t0.Add(30 * time.Second)},
		},
		wantErr: ErrNoTarget,
	}, {
		name:    "cooldown over: tried again",
		targets: []string{"a/m1"},
		prime: func(h *harness) {
			h.ads["a"].on("m1", reply{err: rateLimited(7 * time.Second)}, reply{err: rateLimited(5 * time.Second)})
		},
		advance: 7 * time.Second, wantRetryAt: t0.Add(12 * time.Second), wantAllRL: true,
		wantErr: ErrExhausted,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, map[string]*Route{"default": {
					Targets: targets(tt.targets...),
					// Too short a deadline to wait for any of the refusals: the
					// call says when to come back instead.
					Timeout: time.Second,
					Retry:   Retry{MaxAttempts: 1},
					// One failure (or one rate limit of one call) is enough.
					Breaker: Breaker{FailureRatio: new(1.0), MinCalls: 1, Failures: new(1), InitialCooldown: 30 * time.Second, Cooldown: 30 * time.Second},
				}}, nil)
				tt.prime(h)
				if _, err := h.chat("default"); err == nil {
					t.Fatal("primed call succeeded")
				}
				calls := h.ads["a"].Calls("m1") + h.ads["b"].Calls("m2")
				time.Sleep(tt.advance)
				_, err := h.chat("default")
				var re *RouteError
				if !errors.As(err, &re) || !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if !re.RetryAt.Equal(tt.wantRetryAt) {
					t.Errorf("RetryAt = %v, want %v", re.RetryAt, tt.wantRetryAt)
				}
				if got := re.AllRateLimited(); got != tt.wantAllRL {
					t.Errorf("AllRateLimited() = %v, want %v (%v)", got, tt.wantAllRL, re)
				}
				if diff := cmp.Diff(tt.wantSkipped, re.Skipped); diff != "" {
					t.Errorf("Skipped (-want +got):\n%s", diff)
				}
				if tt.wantErr == ErrNoTarget {
					if now := h.ads["a"].Calls("m1") + h.ads["b"].Calls("m2"); now != calls {
						t.Errorf("upstream called %d more times while every target refused", now-calls)
					}
				}
			})
		})
	}
}

func TestAllRateLimited(t *testing.T) {
	rl := AttemptError{Target: "a/m1", Err: rateLimited(time.Second)}
	down := AttemptError{Target: "b/m2", Err: errServer}
	tests := []struct {
		name string
		re   RouteError
		want bool
	}{
		{"nothing", RouteError{}, false},
		{"one 429", RouteError{Attempts: []AttemptError{rl}}, true},
		{"429 then 5xx", RouteError{Attempts: []AttemptError{rl, down}}, false},
		{"429, wait too long", RouteError{Attempts: []AttemptError{rl}, Skipped: []Skip{{Target: "a/m1", Reason: "server asked to wait"}}}, true},
		{"429, next in cooldown", RouteError{Attempts: []AttemptError{rl}, Skipped: []Skip{{Target: "b/m2", Reason: "rate-limit cooldown", RateLimited: true}}}, true},
		{"429, next breaker open", RouteError{Attempts: []AttemptError{rl}, Skipped: []Skip{{Target: "b/m2", Reason: "breaker open"}}}, false},
		{"429, call out of attempts", RouteError{Attempts: []AttemptError{rl}, Skipped: []Skip{{Target: "b/m2", Reason: skipMaxTotal}}}, true},
		{"only cooldowns", RouteError{Skipped: []Skip{{Target: "a/m1", RateLimited: true}, {Target: "b/m2", RateLimited: true}}}, true},
		{"cooldown and breaker", RouteError{Skipped: []Skip{{Target: "a/m1", RateLimited: true}, {Target: "b/m2", Reason: "breaker open"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.re.AllRateLimited(); got != tt.want {
				t.Errorf("AllRateLimited() = %v, want %v", got, tt.want)
			}
		})
	}
}
