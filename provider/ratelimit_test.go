package provider_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/provider"
)

func TestParseRateLimit(t *testing.T) {
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	for _, tc := range []struct {
		name string
		h    http.Header
		want *provider.RateLimit
	}{
		{"none", hdr("Content-Type", "application/json"), nil},
		{"openai", hdr("x-ratelimit-limit-requests", "500", "x-ratelimit-remaining-requests", "499",
			"x-ratelimit-reset-requests", "120ms", "x-ratelimit-limit-tokens", "30000",
			"x-ratelimit-remaining-tokens", "29000", "x-ratelimit-reset-tokens", "6m0s"),
			&provider.RateLimit{
				Requests: provider.Quota{Limit: 500, Remaining: 499, Known: true, Reset: now.Add(120 * time.Millisecond)},
				Tokens:   provider.Quota{Limit: 30000, Remaining: 29000, Known: true, Reset: now.Add(6 * time.Minute)},
			}},
		{"azure remaining only", hdr("x-ratelimit-remaining-requests", "9", "x-ratelimit-remaining-tokens", "1200"),
			&provider.RateLimit{Requests: provider.Quota{Remaining: 9, Known: true}, Tokens: provider.Quota{Remaining: 1200, Known: true}}},
		{"azure responses unknowns", hdr("x-ratelimit-limit-tokens", "-1", "x-ratelimit-reset-tokens", "0",
			"x-ratelimit-remaining-requests", "3"),
			&provider.RateLimit{Requests: provider.Quota{Remaining: 3, Known: true}}},
		{"azure 2023", hdr("x-rate-limit-remaining-tokens", "0", "x-rate-limit-reset-tokens", "55"),
			&provider.RateLimit{Tokens: provider.Quota{Remaining: 0, Known: true, Reset: now.Add(55 * time.Second)}}},
		{"anthropic", hdr("anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "10",
			"anthropic-ratelimit-requests-reset", "2026-12-01T15:00:02Z", "anthropic-ratelimit-input-tokens-limit", "50000",
			"anthropic-ratelimit-input-tokens-remaining", "49000", "anthropic-ratelimit-input-tokens-reset", "2026-12-01T15:00:01Z"),
			&provider.RateLimit{
				Requests: provider.Quota{Limit: 50, Remaining: 10, Known: true, Reset: now.Add(2 * time.Second)},
				Tokens:   provider.Quota{Limit: 50000, Remaining: 49000, Known: true, Reset: now.Add(time.Second)},
			}},
		{"garbage", hdr("x-ratelimit-remaining-requests", "many", "x-ratelimit-reset-requests", "soon"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, provider.ParseRateLimit(tc.h, now)); diff != "" {
				t.Errorf("ParseRateLimit (-want +got):\n%s", diff)
			}
		})
	}
}

// Reading the headers of an answer that announces no rate limit allocates
// nothing (an absent header is not parsed into an error): it runs on every
// answer.
func TestParseRateLimitQuiet(t *testing.T) {
	h := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req_1"}}
	if n := testing.AllocsPerRun(100, func() {
		if provider.ParseRateLimit(h, time.Now()) != nil {
			t.Fatal("a rate limit from no header")
		}
	}); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
