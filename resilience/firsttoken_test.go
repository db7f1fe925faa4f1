package resilience_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/resilience"
)

// TestFirstTokenHedge is issue 13's scenario 6: the primary's stream sends
// its headers at once, then only keep-alives for 12 s before its first
// token. After hedge.first_token_after (default 8 s) the fallback starts
// too; its first token wins and the primary is cancelled. Before, the
// caller saw nothing for 12 s (up to the 15 s first-token timeout).
func TestFirstTokenHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const slow = "gpt-4.1+fault=stall:12"
		_, eng := mockStack(t, nil, routes(routeOf("openai/"+slow, "anthropic/claude-sonnet-4-5")), nil)
		start := time.Now()
		sr, err := eng.Stream(context.Background(), &resilience.Call{Request: ask("hello")})
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		got := resilience.Streamed(t, sr.Stream)
		if sr.Target != "anthropic/claude-sonnet-4-5" || !strings.HasPrefix(got, "Mock answer from claude-sonnet-4-5") {
			t.Errorf("answered by %s: %q", sr.Target, got)
		}
		if took < 8*time.Second || took > 9*time.Second {
			t.Errorf("first token after %v, want just after 8 s", took)
		}
		if sr.Attempts != 2 {
			t.Errorf("%d attempts, want 2 (the hedge counts)", sr.Attempts)
		}
		t.Logf("first token after %v", took)
	})
}
