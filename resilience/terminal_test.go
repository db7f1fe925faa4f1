package resilience

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/provider"
)

func TestRouteErrorTerminal(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	att := func(target string, pe *provider.Error) AttemptError { return AttemptError{Target: target, Err: pe} }
	fault := Skip{Target: "b/m2", Reason: "key b: breaker open", Fault: errAuth, Since: t0}
	tests := []struct {
		name       string
		re         RouteError
		want       *provider.Error
		wantTarget string
		wantSince  time.Time
	}{
		{"nothing", RouteError{}, nil, "", time.Time{}},
		{"invalid, next ineligible", RouteError{Attempts: []AttemptError{att("a/m1", errInvalid)},
			Skipped: []Skip{{Target: "b/m2", Reason: "invalid_request never falls back", Ineligible: true}}}, errInvalid, "a/m1", time.Time{}},
		{"invalid, earlier breaker open", RouteError{Attempts: []AttemptError{att("b/m2", errInvalid)},
			Skipped: []Skip{{Target: "a/m1", Reason: "breaker open"}}}, errInvalid, "b/m2", time.Time{}},
		{"context twice", RouteError{Attempts: []AttemptError{att("a/m1", errContextLen), att("b/m2", errContextLen)}}, errContextLen, "b/m2", time.Time{}},
		{"filtered", RouteError{Attempts: []AttemptError{att("a/m1", errFiltered)}}, errFiltered, "a/m1", time.Time{}},
		{"overloaded then invalid: not the request's", RouteError{Attempts: []AttemptError{att("a/m1", errOverloaded), att("b/m2", errInvalid)}}, nil, "", time.Time{}},
		{"bad key", RouteError{Attempts: []AttemptError{att("a/m1", errAuth)}}, errAuth, "a/m1", time.Time{}},
		{"bad key, then a key fault held by a breaker", RouteError{Attempts: []AttemptError{att("a/m1", errAuth)}, Skipped: []Skip{fault}}, errAuth, "a/m1", time.Time{}},
		{"only key faults held by breakers", RouteError{Skipped: []Skip{fault}}, errAuth, "b/m2", t0},
		{"bad key, next breaker open for ill health", RouteError{Attempts: []AttemptError{att("a/m1", errAuth)},
			Skipped: []Skip{{Target: "b/m2", Reason: "breaker open"}}}, nil, "", time.Time{}},
		{"bad key, next in cooldown", RouteError{Skipped: []Skip{fault, {Target: "c/m3", RateLimited: true}}}, nil, "", time.Time{}},
		{"overloaded, then bad key", RouteError{Attempts: []AttemptError{att("a/m1", errOverloaded), att("b/m2", errAuth)}}, nil, "", time.Time{}},
		{"bad key, out of attempts", RouteError{Attempts: []AttemptError{att("a/m1", errAuth)}, Skipped: []Skip{{Target: "b/m2", Reason: skipMaxTotal}}}, errAuth, "a/m1", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pe, since, target := tt.re.Terminal()
			if pe != tt.want || target != tt.wantTarget || !since.Equal(tt.wantSince) {
				t.Errorf("Terminal() = %v, %v, %q; want %v, %v, %q", pe, since, target, tt.want, tt.wantSince, tt.wantTarget)
			}
		})
	}
}

// A bad key opens its key's breaker with the failure kept in the record:
// later calls are refused with it (as first seen, also after a probe that
// failed again), without calling upstream and without a retry time; a probe
// that succeeds clears it.
func TestKeyFaultHeldByBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{"default": {
			Targets: targets("a/m1"), Retry: Retry{MaxAttempts: 1},
			Breaker: Breaker{Cooldown: 30 * time.Second},
		}}, nil)
		t0 := time.Now()
		h.ads["a"].on("m1", reply{err: errAuth}, reply{err: errAuth}, reply{})
		refused := func(step string) {
			t.Helper()
			_, err := h.chat("default")
			var re *RouteError
			if !errors.As(err, &re) || !errors.Is(err, ErrNoTarget) || len(re.Skipped) != 1 {
				t.Fatalf("%s: %v", step, err)
			}
			s := re.Skipped[0]
			if s.Fault == nil || s.Fault.Verdict.Message != errAuth.Verdict.Message || s.Fault.Verdict.RequestID != errAuth.Verdict.RequestID ||
				!s.Since.Equal(t0) || !re.RetryAt.IsZero() {
				t.Errorf("%s: skip %+v (fault %v), RetryAt %v; want the 401 first seen at %v and no retry time", step, s, s.Fault, re.RetryAt, t0)
			}
			if pe, _, _ := re.Terminal(); pe == nil || pe.Verdict.Status != 401 {
				t.Errorf("%s: Terminal() = %v", step, pe)
			}
		}
		if _, err := h.chat("default"); err == nil {
			t.Fatal("bad key succeeded")
		}
		refused("while open")
		time.Sleep(31 * time.Second) // half-open: the probe gets 401 again
		if _, err := h.chat("default"); err == nil {
			t.Fatal("probe succeeded")
		}
		refused("reopened")
		if n := h.ads["a"].Calls("m1"); n != 2 {
			t.Errorf("%d upstream calls, want 2 (the first and the probe)", n)
		}
		time.Sleep(31 * time.Second)
		if _, err := h.chat("default"); err != nil {
			t.Fatalf("fixed key: %v", err)
		}
		b, err := h.eng.store.Breaker(context.Background(), keyKey("a"))
		if err != nil || b.Fault.Status != 0 {
			t.Errorf("after a success the record still holds %+v (%v)", b.Fault, err)
		}
	})
}
