package resilience_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/state/memstore"
)

// TestPacingBeforeThe429 is issue 13's scenario 7: the upstream allows 11
// requests at once, regained at 11 a second, and announces what is left on
// every answer (x-ratelimit-remaining-requests). After one call it says
// remaining: 10; then 100 calls come at once. The engine paces the target
// by the announcement: the calls queue for their turns and every one is
// answered, drawing at most a handful of 429s. Before, 90 of the first 100
// requests drew a 429, and their retries more. Each call that waits for its
// turn says so first (EventPace, with the wait).
func TestPacingBeforeThe429(t *testing.T) {
	for _, tc := range []struct{ name, target string }{
		{"openai", "openai/gpt-4.1"},
		{"anthropic", "anthropic/claude-sonnet-4-5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mc := &mock.Config{RateLimit: &mock.RateLimit{Requests: 11, Per: time.Second}}
				var paced []resilience.Event
				var pmu sync.Mutex
				srv, eng := mockStack(t, mc, routes(routeOf(tc.target)), func(o *resilience.Options) {
					o.OnEvent = func(ev resilience.Event) {
						if ev.Kind == resilience.EventPace {
							pmu.Lock()
							paced = append(paced, ev)
							pmu.Unlock()
						}
					}
				})
				ctx := context.Background()
				if _, err := eng.Chat(ctx, &resilience.Call{Request: ask("warm up")}); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				var wg sync.WaitGroup
				var mu sync.Mutex
				failed, slowest := 0, time.Duration(0)
				for range 100 {
					wg.Go(func() {
						_, err := eng.Chat(ctx, &resilience.Call{Request: ask("burst")})
						mu.Lock()
						defer mu.Unlock()
						slowest = max(slowest, time.Since(start))
						if err != nil {
							failed++
							if failed == 1 {
								t.Errorf("a call failed: %v", err)
							}
						}
					})
				}
				wg.Wait()
				limited := served(srv, modelOf(tc.target), 429)
				if failed > 0 {
					t.Errorf("%d of 100 calls failed", failed)
				}
				if limited > 5 {
					t.Errorf("%d requests drew a 429, want at most a handful", limited)
				}
				longest := time.Duration(0)
				for _, ev := range paced {
					if ev.Target != tc.target || ev.Wait <= 0 {
						t.Errorf("pace event on %q waiting %v", ev.Target, ev.Wait)
					}
					longest = max(longest, ev.Wait)
				}
				if len(paced) < 50 || longest > slowest {
					t.Errorf("%d pace events, the longest wait %v (the slowest call %v); want 50 or more, none longer", len(paced), longest, slowest)
				}
				t.Logf("100 calls answered within %v; %d 429s, %d requests, %d paced (longest wait %v)", slowest, limited, len(srv.Requests())-1, len(paced), longest)
			})
		})
	}
}

// TestPacingShared: two engines (replicas) on one Store pace the target by
// one bucket. The burst of TestPacingBeforeThe429, split over them, draws
// at most a handful of 429s; pacing each on its own, both take the 10
// left that the warm-up announced as theirs.
func TestPacingShared(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shared bool
	}{{"shared", true}, {"per engine", false}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mc := &mock.Config{RateLimit: &mock.RateLimit{Requests: 11, Per: time.Second}}
				cfg := routes(routeOf("openai/gpt-4.1"))
				srv, adapters := mockAdapters(t, mc, cfg)
				store := memstore.New()
				engines := make([]*resilience.Engine, 2)
				for i := range engines {
					opts := cfg.EngineOptions()
					opts.Adapters = adapters
					if tc.shared {
						opts.Store = store
					}
					e, err := resilience.New(opts)
					if err != nil {
						t.Fatal(err)
					}
					engines[i] = e
				}
				ctx := context.Background()
				for _, e := range engines {
					if _, err := e.Chat(ctx, &resilience.Call{Request: ask("warm up")}); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(time.Second) // the limit is whole again
				var wg sync.WaitGroup
				for i := range 100 {
					wg.Go(func() { engines[i%2].Chat(ctx, &resilience.Call{Request: ask("burst")}) })
				}
				wg.Wait()
				limited := served(srv, "gpt-4.1", 429)
				t.Logf("%d 429s, %d requests", limited, len(srv.Requests())-2)
				if tc.shared && limited > 5 {
					t.Errorf("%d requests drew a 429 with the bucket shared, want at most a handful", limited)
				}
				if !tc.shared && limited <= 5 {
					t.Errorf("%d requests drew a 429 pacing each engine on its own: the test shows nothing", limited)
				}
			})
		})
	}
}
