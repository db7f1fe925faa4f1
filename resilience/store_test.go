package resilience

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
)

// optimisticStore calls fn an extra time on a throwaway copy before each
// real update, as a backend with optimistic transactions (Redis WATCH) may.
// The engine's update functions must give the same result.
type optimisticStore struct {
	*memstore.Store
	extra int
}

func (s *optimisticStore) UpdateBreaker(ctx context.Context, key string, fn func(b *state.Breaker) bool) (state.Breaker, error) {
	cur, err := s.Breaker(ctx, key)
	if err != nil {
		return cur, err
	}
	fn(&cur) // a lost race: the result is discarded
	s.extra++
	return s.Store.UpdateBreaker(ctx, key, fn)
}

func TestEngineToleratesOptimisticStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &optimisticStore{Store: memstore.New()}
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1", "b/m2"), Retry: Retry{MaxAttempts: 1},
				Breaker: Breaker{FailureRatio: new(1.0), MinCalls: 2, Failures: new(2), InitialCooldown: 10 * time.Second, Probes: 1}},
		}, func(o *Options) { o.Store = st })
		h.ads["a"].on("m1", reply{err: errOverloaded}, reply{err: errOverloaded}, reply{})
		for range 2 {
			if res, err := h.chat("default"); err != nil || res.Target != "b/m2" {
				t.Fatalf("res=%+v err=%v", res, err)
			}
		}
		if res, _ := h.chat("default"); res.Target != "b/m2" || h.ads["a"].Calls("m1") != 2 {
			t.Fatalf("open breaker not skipped: %+v, a calls %d", res, h.ads["a"].Calls("m1"))
		}
		time.Sleep(10 * time.Second)
		if res, err := h.chat("default"); err != nil || res.Target != "a/m1" {
			t.Fatalf("probe: res=%+v err=%v", res, err)
		}
		b, _ := st.Breaker(context.Background(), "target/a/m1")
		if breakerState(&b) != state.Closed || b.Probes != 0 {
			t.Errorf("after the probe: %+v", b)
		}
		if st.extra == 0 {
			t.Fatal("the store was never asked to update")
		}
		var transitions []string
		for _, ev := range h.Events() {
			if ev.Kind == EventBreaker {
				transitions = append(transitions, ev.From+"->"+ev.To)
			}
		}
		if len(transitions) != 3 {
			t.Errorf("breaker events %v, want 3 (no duplicates from repeated update functions)", transitions)
		}
	})
}
