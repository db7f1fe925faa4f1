package resilience

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestConcurrencyLimitIsPerTarget: a target's limit is the smallest non-zero
// max_concurrency any configured route gives it (its own, else its route's),
// whichever route a call comes through and whichever route is built first.
func TestConcurrencyLimitIsPerTarget(t *testing.T) {
	tests := []struct {
		name   string
		r1, r2 *Route // r1 is built first (routes are built in name order)
		via    string
		want   int
	}{
		{"second route's target override is smaller",
			&Route{Targets: targets("a/m1"), MaxConcurrency: 3},
			&Route{Targets: []Target{{Name: "a/m1", MaxConcurrency: 1}}}, "r1", 1},
		{"second route's route limit is smaller",
			&Route{Targets: targets("a/m1"), MaxConcurrency: 3},
			&Route{Targets: targets("a/m1"), MaxConcurrency: 2}, "r1", 2},
		{"first route's limit is smaller",
			&Route{Targets: targets("a/m1"), MaxConcurrency: 1},
			&Route{Targets: targets("a/m1"), MaxConcurrency: 3}, "r2", 1},
		{"an unlimited route does not lift another's limit",
			&Route{Targets: targets("a/m1")},
			&Route{Targets: targets("a/m1"), MaxConcurrency: 2}, "r1", 2},
		{"a target override replaces its own route's limit",
			&Route{Targets: []Target{{Name: "a/m1", MaxConcurrency: 2}}, MaxConcurrency: 1},
			&Route{Targets: targets("b/m2")}, "r1", 2},
	}
	const calls = 3
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				for _, r := range []*Route{tt.r1, tt.r2} {
					r.QueueTimeout = time.Minute
				}
				h := newHarness(t, map[string]*Route{"r1": tt.r1, "r2": tt.r2}, nil)
				gate := make(chan struct{})
				h.ads["a"].on("m1", reply{block: gate})
				var wg sync.WaitGroup
				for range calls {
					wg.Go(func() {
						if _, err := h.eng.Chat(context.Background(), &Call{Route: tt.via, Request: userReq("x")}); err != nil {
							t.Error(err)
						}
					})
				}
				synctest.Wait() // every call is upstream or queued for a slot
				if got := h.ads["a"].Calls("m1"); got != tt.want {
					t.Errorf("calls in flight on a/m1 = %d, want %d", got, tt.want)
				}
				close(gate)
				wg.Wait()
				if got := h.ads["a"].Calls("m1"); got != calls {
					t.Errorf("upstream calls = %d, want %d", got, calls)
				}
			})
		})
	}
}
