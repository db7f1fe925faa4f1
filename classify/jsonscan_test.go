package classify_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmguard/llmguard/classify"
)

// TestManyDetails pins that no part of a long error body is dropped: a
// Gemini RetryInfo after six other details, a per-day quota after six
// per-minute violations, a legacy reason after four others, and an error
// code after eight other identifiers all still decide the verdict.
func TestManyDetails(t *testing.T) {
	help := `{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]}`
	minute := `{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_input_token_count","quotaId":"GenerateContentInputTokensPerModelPerMinute-FreeTier"}`
	gemini := func(details ...string) []byte {
		return []byte(`{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[` +
			strings.Join(details, ",") + `]}}`)
	}
	repeat := func(s string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	quota := func(violations ...string) string {
		return `{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[` + strings.Join(violations, ",") + `]}`
	}
	perDay := `{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}`
	retry := `{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"26s"}`
	pacificMidnight := time.Date(2026, 8, 22, 7, 0, 0, 0, time.UTC)

	tests := []struct {
		name   string
		status int
		body   []byte
		class  classify.Class
		wait   time.Duration
		until  time.Time
	}{
		{"retry info after six details", 429, gemini(append(repeat(help, 6), quota(minute), retry)...),
			classify.RateLimited, 26 * time.Second, time.Time{}},
		{"retry info after twenty details", 429, gemini(append(repeat(help, 20), quota(minute), retry)...),
			classify.RateLimited, 26 * time.Second, time.Time{}},
		{"per-day after six per-minute violations", 429, gemini(quota(append(repeat(minute, 6), perDay)...), retry),
			classify.QuotaExhausted, 0, pacificMidnight},
		{"legacy reason after four others", 403, []byte(`{"error":{"code":403,"message":"The caller does not have permission.",` +
			`"errors":[{"reason":"a"},{"reason":"b"},{"reason":"c"},{"reason":"d"},{"reason":"API_KEY_INVALID"}]}}`),
			classify.Auth, 0, time.Time{}},
		{"error info reason after eight identifiers", 400, []byte(`{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT","details":[` +
			`{"reason":"r1"},{"reason":"r2"},{"reason":"r3"},{"reason":"r4"},{"reason":"r5"},{"reason":"r6"},{"reason":"r7"},{"reason":"r8"},` +
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`),
			classify.Auth, 0, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := classify.Classify(classify.Input{Status: tt.status, Header: http.Header{}, Body: tt.body, Now: fixedNow})
			if v.Class != tt.class || v.Wait != tt.wait || !v.Until.Equal(tt.until) {
				t.Errorf("class %s, wait %v, until %v; want %s, %v, %v (%s)", v.Class, v.Wait, v.Until, tt.class, tt.wait, tt.until, v.Message)
			}
		})
	}
}
