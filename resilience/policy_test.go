package resilience

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMerge: a target's override replaces each of the route's fields that
// it sets to something other than zero; a nil override, a zero field, a nil
// pointer and a pointer to zero keep the route's, and the route is left as
// it was.
func TestMerge(t *testing.T) {
	route := DefaultRoute()
	r, b := route.Retry, route.Breaker
	allRetry := Retry{MaxAttempts: 2, MaxTotalAttempts: 3, BaseDelay: time.Second, MaxDelay: 2 * time.Second,
		MaxWait: 3 * time.Second, Budget: new(0.25), MinRetryConcurrency: new(7)}
	someRetry := r
	someRetry.MaxAttempts, someRetry.Budget = 1, new(0.1)
	allBreaker := Breaker{Failures: new(9), FailureRatio: new(0.75), MinCalls: 4, Window: time.Minute,
		InitialCooldown: time.Second, Cooldown: 2 * time.Minute, Probes: 1}
	someBreaker := b
	someBreaker.Failures, someBreaker.Window = new(2), time.Second
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"retry, nil", r.Merge(nil), r},
		{"retry, zero", r.Merge(&Retry{}), r},
		{"retry, pointers to zero", r.Merge(&Retry{Budget: new(0.0), MinRetryConcurrency: new(0)}), r},
		{"retry, every field", r.Merge(&allRetry), allRetry},
		{"retry, some fields", r.Merge(&Retry{MaxAttempts: 1, Budget: new(0.1)}), someRetry},
		{"breaker, nil", b.Merge(nil), b},
		{"breaker, zero", b.Merge(&Breaker{}), b},
		{"breaker, pointers to zero", b.Merge(&Breaker{Failures: new(0), FailureRatio: new(0.0)}), b},
		{"breaker, every field", b.Merge(&allBreaker), allBreaker},
		{"breaker, some fields", b.Merge(&Breaker{Failures: new(2), Window: time.Second}), someBreaker},
		{"route unchanged", route, DefaultRoute()},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s: Merge (-want +got):\n%s", tc.name, diff)
		}
	}
}
