package classify_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/llmguard/llmguard/classify"
)

// BenchmarkClassify measures one typical ~300-byte JSON error per provider
// family, headers included.
func BenchmarkClassify(b *testing.B) {
	now := time.Date(2026, 8, 21, 14, 2, 0, 0, time.UTC)
	cases := []struct {
		name   string
		status int
		header http.Header
		body   string
	}{
		{"anthropic", 529, http.Header{"Request-Id": {"req_011CZAau32QzxDkriovTaFCB"}, "X-Should-Retry": {"true"}},
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CZAau32QzxDkriovTaFCB"}`},
		{"openai", 429, http.Header{"X-Request-Id": {"req_2b7e3a4c5d6e7f8091a2b3c4d5e6f7a8"}, "Retry-After": {"10"}, "X-Ratelimit-Remaining-Tokens": {"0"}, "X-Ratelimit-Reset-Tokens": {"9.816s"}},
			`{"error":{"message":"Rate limit reached for gpt-4 in organization org-xRk9 on tokens per min (TPM): Limit 10000, Used 8554, Requested 3082. Please try again in 9.816s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`},
		{"gemini", 503, nil,
			`{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`},
		{"mistral", 429, nil,
			`{"object":"error","message":"Service tier capacity exceeded for this model.","type":"invalid_request_error","param":null,"code":null}`},
		{"deepseek", 402, nil,
			`{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}`},
		{"openrouter", 402, nil,
			`{"error":{"message":"This request requires more credits, or fewer max_tokens. You requested up to 65536 tokens, but can only afford 10114.","code":402,"metadata":{"provider_name":null}},"user_id":"user_2x9Qb7LkPz"}`},
		{"xai", 429, nil,
			`{"code":"Some resource has been exhausted","error":"Your team 16f2151a has either used all available credits or reached its monthly spending limit."}`},
		{"bedrock", 429, http.Header{"X-Amzn-Errortype": {"ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"}, "X-Amzn-Requestid": {"4b1f2e3d-5c6a-4b7c-8d9e-0f1a2b3c4d5e"}},
			`{"message":"Too many tokens, please wait before trying again."}`},
	}
	for _, c := range cases {
		in := classify.Input{Status: c.status, Header: c.header, Body: []byte(c.body), Now: now}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				classify.Classify(in)
			}
		})
	}
}
