// Package classify turns any LLM provider failure into a Verdict: what kind
// of failure it is (Class), whether the same request may succeed later
// (Retryable, after Wait), when a key-wide quota resets (Until), what is
// broken (Scope, which circuit breakers key on) and whether another model or
// provider could serve the request (Fallback).
//
// Classify reads the provider's structured fields first (code, type,
// ErrorInfo reason, x-amzn-ErrorType), then the HTTP status, then the
// message text, for every envelope the providers use: Anthropic, OpenAI
// and its compatibles, Mistral's flat form, google.rpc.Status (alone or in
// a JSON array), OpenRouter with the upstream body in metadata.raw, xAI's
// flat form, Bedrock, bodies double-encoded in error.message, SSE streams
// whose error arrives inside an HTTP 200, HTML and problem+json pages from
// proxies, plain text, and empty or truncated bodies. Every wait hint is
// honoured and the largest wins: retry-after, retry-after-ms,
// x-ratelimit-reset-*, anthropic-ratelimit-*-reset, google.rpc.RetryInfo
// and "Please try again in 1.2s" in messages; x-should-retry overrides
// the status.
//
// The package is stdlib only, has no state, and every function is safe for
// concurrent use.
//
//	v := classify.Classify(classify.Input{
//		Provider: "anthropic",
//		Status:   529,
//		Header:   resp.Header,
//		Body:     body,
//	})
//	if v.Retryable {
//		time.Sleep(v.Wait) // or hand the verdict to resilience.Engine
//	}
//	log.Println(v.Message, "-", v.Advice())
package classify
