package resilience_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/resilience"
)

// TestSilentTargetHangsUp is issue 13's scenario 5: the primary sends no
// response headers for 15 s, then its proxy closes the connection. That
// close after more than silent_after (default 5 s) of silence is a timeout:
// the call falls back at once and does not try the primary again. Before,
// it was a network EOF, retried on the primary (15 s each) until the
// call's 60 s deadline.
func TestSilentTargetHangsUp(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream bool
	}{{"chat", false}, {"stream", true}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const silent = "gpt-4.1+fault=silent"
				r := routeOf("openai/"+silent, "anthropic/claude-sonnet-4-5")
				if tc.stream {
					// The first-token hedge would answer at 8 s: this is
					// about the silent target itself.
					r.Hedge.FirstTokenAfter = new(time.Duration(0))
				}
				srv, eng := mockStack(t, nil, routes(r), nil)
				var verdicts []classify.Class
				start := time.Now()
				c := &resilience.Call{Request: ask("hello"), OnEvent: func(e resilience.Event) {
					if e.Kind == resilience.EventFailure {
						verdicts = append(verdicts, e.Verdict.Class)
					}
				}}
				var target string
				if tc.stream {
					sr, err := eng.Stream(context.Background(), c)
					if err != nil {
						t.Fatalf("caller got %v after %v, want the fallback's answer", err, time.Since(start))
					}
					sr.Stream.Close()
					target = sr.Target
				} else {
					res, err := eng.Chat(context.Background(), c)
					if err != nil {
						t.Fatalf("caller got %v after %v, want the fallback's answer", err, time.Since(start))
					}
					target = res.Target
				}
				took := time.Since(start)
				if target != "anthropic/claude-sonnet-4-5" {
					t.Errorf("answered by %s", target)
				}
				if n := served(srv, "gpt-4.1", 0); n != 1 {
					t.Errorf("the silent target got %d requests, want 1", n)
				}
				if len(verdicts) != 1 || verdicts[0] != classify.Timeout {
					t.Errorf("failures %v, want one timeout", verdicts)
				}
				if took > 16*time.Second {
					t.Errorf("answer after %v, want it once the silent target hung up (15 s)", took)
				}
				t.Logf("answer after %v", took)
			})
		})
	}
	// A close sooner than silent_after stays a network failure, retried.
	synctest.Test(t, func(t *testing.T) {
		const quick = "gpt-4.1+fault=silent:2"
		srv, eng := mockStack(t, nil, routes(routeOf("openai/"+quick, "anthropic/claude-sonnet-4-5")), nil)
		res, err := eng.Chat(context.Background(), &resilience.Call{Request: ask("hello")})
		if err != nil {
			t.Fatal(err)
		}
		if n := served(srv, "gpt-4.1", 0); res.Target != "anthropic/claude-sonnet-4-5" || n != 4 {
			t.Errorf("a 2 s silence then a close: %d attempts on it (want 4: retried), answered by %s", n, res.Target)
		}
	})
}
