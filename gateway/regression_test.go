package gateway

// Regression tests from a review of the gateway against issue 6: each
// failed before its fix.

import (
	"testing"
	"testing/synctest"
	"time"
)

const reviewConfig = mockProviders + `routes:
  default:
    targets: [anthropic/claude-sonnet-4-5]
  down-then-badkey:
    targets: [anthropic/claude-sonnet-4-5+fault=529, openai/gpt-4o+fault=401]
    retry: {max_attempts: 2}
  down-then-small:
    targets: [anthropic/claude-sonnet-4-5+fault=529, openai/gpt-4o+fault=context_overflow]
    retry: {max_attempts: 2}
  limited-then-credit:
    targets: ["openai/gpt-4o+fault=429:20", anthropic/claude-sonnet-4-5+fault=credit_low]
    retry: {max_attempts: 1}
`

// The primary is overloaded (the request is fine); the fallback rejects it
// for its own reasons. The client must not be told its request/key is at fault.
func TestRegressionLastTargetFaultIsNotTheRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, route := range []string{"down-then-badkey", "down-then-small", "limited-then-credit"} {
			// A stack each: a bad key seen on one route is every later route's
			// truth on that key.
			st := newStackConfig(t, reviewConfig, nil)
			r := st.post(t, "/v1/messages", anBody(route, false, ""), "anthropic-version", "2023-06-01")
			t.Logf("%s: %d x-should-retry=%q retry-after=%q body=%s", route, r.status, r.header.Get("X-Should-Retry"), r.header.Get("Retry-After"), r.body)
			if r.status != 503 && r.status != 429 {
				t.Errorf("%s: status %d, want 503 (primary down) / 429", route, r.status)
			}
		}
	})
}

// Idempotency-Key on a streaming request: the second request must be
// deduplicated/replayed, not sent upstream again.
func TestRegressionStreamIdempotencyKey(t *testing.T) {
	st := newStackConfig(t, reviewConfig, nil)
	for i := 0; i < 2; i++ {
		r := st.post(t, "/v1/chat/completions", oaBody("default", true, ""), "Idempotency-Key", "abc-123")
		if r.status != 200 {
			t.Fatalf("status %d %s", r.status, r.body)
		}
		if cached := r.header.Get("X-Llmguard-Cached"); (i == 1) != (cached == "true") {
			t.Errorf("stream %d: X-Llmguard-Cached %q", i+1, cached)
		}
	}
	for i := 0; i < 2; i++ {
		st.post(t, "/v1/chat/completions", oaBody("default", false, ""), "Idempotency-Key", "xyz-9")
	}
	n := len(st.mock.Requests())
	t.Logf("upstream requests: %d (2 streamed + 2 non-streamed with 2 distinct keys)", n)
	if n != 2 {
		t.Errorf("upstream requests = %d, want 2 (one per Idempotency-Key)", n)
	}
}

const reviewCostConfig = mockProviders + `routes:
  default:
    order: cost
    targets: [openai/gpt-4o-mini, anthropic/claude-sonnet-4-5]
`

// A request that names a target must be served by that target when it is
// healthy; its "fallbacks" are appended after it, not sorted before it.
func TestRegressionNamedTargetWithFallbackCostOrder(t *testing.T) {
	st := newStackConfig(t, reviewCostConfig, nil)
	r := st.post(t, "/v1/chat/completions", oaBody("anthropic/claude-sonnet-4-5", false, `,"fallbacks":["openai/gpt-4o-mini"]`))
	t.Logf("%d target=%s", r.status, r.header.Get("X-Llmguard-Target"))
	if got := r.header.Get("X-Llmguard-Target"); got != "anthropic/claude-sonnet-4-5" {
		t.Errorf("served by %q, want the named target anthropic/claude-sonnet-4-5 (healthy)", got)
	}
	r = st.post(t, "/v1/chat/completions", oaBody("anthropic/claude-sonnet-4-5", false, ""))
	t.Logf("without fallbacks: %d target=%s", r.status, r.header.Get("X-Llmguard-Target"))
}

const reviewStreamConfig = mockProviders + `routes:
  default:
    targets: [anthropic/claude-sonnet-4-5+fault=midstream:0, openai/gpt-4o]
  stuck:
    targets: [anthropic/claude-sonnet-4-5+fault=stuck:0, openai/gpt-4o]
    stream: {first_token_timeout: 300ms, idle_timeout: 1s}
  oai0:
    targets: [openai/gpt-4o+fault=midstream:0, anthropic/claude-sonnet-4-5]
`

// Anthropic's stream says 200 + message_start, then fails before any token
// (an overloaded error event). No token went out: the gateway must move on
// to the next target, not end the client's stream with an error.
func TestRegressionFailureBeforeFirstTokenFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newStackConfig(t, reviewStreamConfig, nil)
		for _, route := range []string{"default", "stuck", "oai0"} {
			start := time.Now()
			r := st.post(t, "/v1/messages", anBody(route, true, ""), "anthropic-version", "2023-06-01")
			text, end, _ := streamText(t, DialectAnthropic, r.body)
			t.Logf("%s: %d target=%s text=%q end=%q in %s\n%s", route, r.status, r.header.Get("X-Llmguard-Target"), text, end, time.Since(start), r.body)
			if text == "" {
				t.Errorf("%s: no answer; the healthy second target was never tried", route)
			}
		}
	})
}
