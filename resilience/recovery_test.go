package resilience_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/resilience"
)

// TestRecoveryAfterOutage is issue 13's scenario 4: the primary answers
// 500 for the first 6 s, then recovers. Steady traffic (4 callers, one call
// every 100 ms each) rides the fallback during the outage, with no call
// failing; within 10 s of its recovery the primary serves again, and every
// call from then on is its. The breaker trips within the first second, its
// first cooldown (5 s) ends inside the outage, its probes fail, and the
// doubled one (10 s) ends after it: the bound the issue sets. A fixed 60 s
// cooldown kept the primary out until a minute after the trip.
func TestRecoveryAfterOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const outage, within = 6 * time.Second, 10 * time.Second // within: of the recovery
		sc := &mock.Scenario{Name: "six-second-outage", Rules: []mock.Rule{{
			Match:    mock.Match{Provider: "anthropic"},
			Sequence: []mock.Step{{Kind: mock.KindServerError}},
			For:      outage,
		}}}
		route := routeOf("anthropic/claude-sonnet-4-5", "openai/gpt-4.1")
		route.Retry.MaxAttempts = 2
		srv, eng := mockStack(t, &mock.Config{Scenario: sc}, routes(route), nil)
		start := time.Now()
		type call struct {
			at     time.Duration
			target string
			err    error
		}
		var mu sync.Mutex
		var calls []call
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for time.Since(start) < 20*time.Second {
					at := time.Since(start)
					res, err := eng.Chat(context.Background(), &resilience.Call{Request: ask("status report")})
					c := call{at: at, err: err}
					if err == nil {
						c.target = res.Target
					}
					mu.Lock()
					calls = append(calls, c)
					mu.Unlock()
					time.Sleep(100 * time.Millisecond)
				}
			})
		}
		wg.Wait()
		back := time.Duration(-1) // when the primary first answered after the outage
		for _, c := range calls {
			if c.err != nil {
				t.Errorf("call at %v failed: %v", c.at, c.err)
				continue
			}
			if c.target == "anthropic/claude-sonnet-4-5" && c.at >= outage && (back < 0 || c.at < back) {
				back = c.at
			}
		}
		if back < 0 {
			t.Fatalf("primary never served again in the %v after the outage began", 20*time.Second)
		}
		if back-outage > within {
			t.Fatalf("primary serving again %v after the outage began, want within %v of its end", back, within)
		}
		late := 0
		for _, c := range calls {
			if c.at >= back+time.Second && c.target != "anthropic/claude-sonnet-4-5" {
				late++
			}
		}
		if late > 0 {
			t.Errorf("%d calls more than 1s after %v still went to the fallback", late, back)
		}
		t.Logf("primary back %v after the outage began (%v after it ended); %d calls, primary 500s %d",
			back, back-outage, len(calls), served(srv, "claude-sonnet-4-5", 500))
	})
}
