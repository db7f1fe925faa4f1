package resilience

import (
	"maps"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestRetryBudgetAfterBackoff: calls that fail together and leave their
// backoff together retry within the budget. Ten calls in flight on a/m1 get
// the same 429 (retry-after 2s) at once; the budget allows two retry
// attempts at once (0.2 of ten calls), and a retry takes a second on the
// wire. Two calls retry on a/m1, the other eight move on to b/m2 after the
// wait. Before, the budget was asked only when the attempts failed, when no
// retry was in flight: all ten retried at once.
func TestRetryBudgetAfterBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1", "b/m2"), Retry: Retry{MaxAttempts: 2, Budget: new(0.2), MinRetryConcurrency: new(-1)}},
		}, nil)
		var rs []reply
		for range 10 {
			rs = append(rs, reply{err: rateLimited(2 * time.Second), delay: 100 * time.Millisecond})
		}
		h.ads["a"].on("m1", append(rs, reply{delay: time.Second})...)
		var wg sync.WaitGroup
		won := make(chan string, 10)
		for range 10 {
			wg.Go(func() {
				res, err := h.chat("default")
				if err != nil {
					t.Error(err)
					return
				}
				won <- res.Target
			})
		}
		wg.Wait()
		close(won)
		got := map[string]int{}
		for target := range won {
			got[target]++
		}
		if want := map[string]int{"a/m1": 2, "b/m2": 8}; !maps.Equal(got, want) {
			t.Errorf("answered by %v, want %v", got, want)
		}
		if n := h.ads["a"].Calls("m1"); n != 12 {
			t.Errorf("a/m1 called %d times, want 12 (10 attempts, 2 retries)", n)
		}
	})
}
