package classify_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/llmguard/llmguard/classify"
)

// FuzzClassify feeds arbitrary bodies (seeded with every fixture) through
// the body parser under a few statuses: it must never panic and every
// verdict must keep its invariants.
func FuzzClassify(f *testing.F) {
	for _, fx := range loadFixtures(f) {
		f.Add(fx.input.Status, fx.input.Body, fx.input.Header.Get("Retry-After"))
	}
	f.Add(200, []byte("data: {\"error\":{\"message\":\"{\\\"error\\\":{\\\"message\\\":\\\"[{\\\\\\\"error\\\\\\\":1}]\\\"}}\"}}\n\n"), "")
	f.Fuzz(func(t *testing.T, status int, body []byte, retryAfter string) {
		h := http.Header{}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		for _, st := range []int{status, 200, 429} {
			v := classify.Classify(classify.Input{Status: st, Header: h, Body: body, Now: fixedNow})
			checkVerdictInvariants(t, v)
		}
		if v, ok := classify.ClassifyStreamError("", body, h); ok {
			checkVerdictInvariants(t, v)
		}
		_ = classify.GuessProvider(h, body)
	})
}

// FuzzParseDuration checks the hint parsers never panic and never return a
// negative or absurd delay.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"1s", "6m0s", "20ms", "0.539477544s", "125h58m35.9s", "55", "-1", "0",
		"1.5", "Fri, 21 Aug 2026 14:03:00 GMT", "9223372036854775807s", "1e9", ".", "NaN", "Inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, ok := classify.ParseDuration(s); ok && (d < 0 || d > 366*24*time.Hour) {
			t.Errorf("ParseDuration(%q) = %v", s, d)
		}
		if d, ok := classify.ParseRetryAfter(s, fixedNow); ok && (d < 0 || d > 366*24*time.Hour) {
			t.Errorf("ParseRetryAfter(%q) = %v", s, d)
		}
		msg := []byte(`{"error":{"message":"Please try again in ` + s + `","type":"tokens","code":"rate_limit_exceeded"}}`)
		v := classify.Classify(classify.Input{Status: 429, Body: msg, Now: fixedNow})
		checkVerdictInvariants(t, v)
		_ = classify.Redact(s)
	})
}
