package registry_test

import (
	"context"
	"testing"
	"time"

	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
)

// TestRateLimitSurfaced: every adapter whose provider announces rate limits
// surfaces them on every response: Chat's Response.RateLimit, a Stream's
// RateLimit (provider.RateLimitReporter), and a failure's Error.RateLimit.
// Gemini announces none.
func TestRateLimitSurfaced(t *testing.T) {
	for _, tg := range mockTargets {
		t.Run(tg.name, func(t *testing.T) {
			_, a := startMock(t, tg, &mock.Config{RateLimit: &mock.RateLimit{Requests: 2, Per: time.Hour}})
			ctx := context.Background()
			announces := tg.name != "gemini"
			check := func(what string, rl *provider.RateLimit, remaining int) {
				t.Helper()
				switch {
				case !announces && rl != nil:
					t.Errorf("%s: rate limit %+v from a provider that announces none", what, rl)
				case !announces:
				case rl == nil || !rl.Requests.Known || rl.Requests.Remaining != remaining:
					t.Errorf("%s: rate limit %+v, want %d requests remaining", what, rl, remaining)
				case tg.name != "azure" && (rl.Requests.Limit != 2 || !rl.Requests.Reset.After(time.Now())):
					t.Errorf("%s: rate limit %+v, want limit 2 and a reset ahead", what, rl)
				}
			}
			res, err := a.Chat(ctx, userText(tg.model, "hi"))
			if err != nil {
				t.Fatal(err)
			}
			check("chat", res.RateLimit, 1)
			s, err := a.Stream(ctx, userText(tg.model, "hi"))
			if err != nil {
				t.Fatal(err)
			}
			rr, ok := s.(provider.RateLimitReporter)
			if !ok {
				t.Fatalf("%T is not a provider.RateLimitReporter", s)
			}
			check("stream", rr.RateLimit(), 0)
			s.Close()
			_, err = a.Chat(ctx, userText(tg.model, "hi"))
			pe := provider.AsError(err)
			if pe == nil {
				t.Fatalf("third call: %v, want the rate limit's 429", err)
			}
			check("429", pe.RateLimit, 0)
		})
	}
}
