package classify_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/llmguard/llmguard/classify"
)

// fixtureInput loads one named fixture's input.
func fixtureInput(t *testing.T, name string) classify.Input {
	t.Helper()
	for _, fx := range loadFixtures(t) {
		if fx.name == name {
			return fx.input
		}
	}
	t.Fatalf("no fixture %q", name)
	return classify.Input{}
}

// TestTraps pins every trap from issue 2 on a real body, independently of
// the golden files, so that an -update cannot silently change them.
func TestTraps(t *testing.T) {
	type want struct {
		class     classify.Class
		retryable bool
		wait      time.Duration
		until     time.Time
		scope     classify.Scope
		fallback  bool
	}
	pacificMidnight := time.Date(2026, 8, 22, 7, 0, 0, 0, time.UTC) // 00:00 PDT
	tests := []struct {
		fixture string
		want    want
	}{
		// OpenAI insufficient_quota / billing_not_active are 429 but terminal.
		{"openai-429-insufficient-quota", want{classify.QuotaExhausted, false, 0, time.Time{}, classify.ScopeKey, true}},
		{"openai-429-billing-not-active", want{classify.QuotaExhausted, false, 0, time.Time{}, classify.ScopeKey, true}},
		{"openai-responses-sse-insufficient-quota", want{classify.QuotaExhausted, false, 0, time.Time{}, classify.ScopeKey, true}},
		// Anthropic tier spend cap: 429 rate_limit_error + enforced_spend_limit_reached.
		{"anthropic-429-enforced-spend-limit", want{classify.QuotaExhausted, false, 0, time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), classify.ScopeKey, true}},
		// Request too large under 429 (OpenAI) or 413 with retry-after (Groq).
		{"openai-429-request-too-large", want{classify.RequestTooLarge, false, 0, time.Time{}, classify.ScopeRequest, true}},
		{"groq-413-request-too-large-retry-after", want{classify.RequestTooLarge, false, 0, time.Time{}, classify.ScopeRequest, true}},
		{"anthropic-413-request-too-large", want{classify.RequestTooLarge, false, 0, time.Time{}, classify.ScopeRequest, false}},
		// Anthropic low credit is a 400.
		{"anthropic-400-credit-balance-too-low", want{classify.QuotaExhausted, false, 0, time.Time{}, classify.ScopeKey, true}},
		// DeepSeek 402, OpenRouter 402, xAI 403/429 credits, Azure 86400 s.
		{"deepseek-402-insufficient-balance", want{classify.QuotaExhausted, false, 0, time.Time{}, classify.ScopeKey, true}},
		{"openrouter-402-credits", want{classify.QuotaExhausted, false, 0, time.Time{}, classify.ScopeKey, true}},
		{"xai-403-credits", want{classify.QuotaExhausted, false, 0, time.Time{}, classify.ScopeKey, true}},
		{"xai-429-credits", want{classify.QuotaExhausted, false, 0, time.Time{}, classify.ScopeKey, true}},
		{"azure-429-retry-after-86400", want{classify.QuotaExhausted, false, 0, fixedNow.Add(24 * time.Hour), classify.ScopeKey, true}},
		// Gemini per-day vs per-minute vs limit: 0.
		{"gemini-429-per-day", want{classify.QuotaExhausted, false, 0, pacificMidnight, classify.ScopeKey, true}},
		{"gemini-429-per-minute", want{classify.RateLimited, true, 26 * time.Second, time.Time{}, classify.ScopeModel, true}},
		{"gemini-429-double-encoded", want{classify.RateLimited, true, 26 * time.Second, time.Time{}, classify.ScopeModel, true}},
		{"gemini-429-limit-zero", want{classify.QuotaExhausted, false, 0, time.Time{}, classify.ScopeKey, true}},
		{"gemini-429-rate-limit-exceeded-quota-limit-value-0", want{classify.QuotaExhausted, false, 0, time.Time{}, classify.ScopeKey, true}},
		// A bad Gemini key is a 400 INVALID_ARGUMENT + API_KEY_INVALID.
		{"gemini-400-api-key-invalid", want{classify.Auth, false, 0, time.Time{}, classify.ScopeKey, true}},
		// Overload.
		{"anthropic-529-overloaded", want{classify.Overloaded, true, 0, time.Time{}, classify.ScopeModel, true}},
		{"gemini-503-overloaded", want{classify.Overloaded, true, 0, time.Time{}, classify.ScopeModel, true}},
		{"anthropic-sse-error-after-text", want{classify.Overloaded, true, 0, time.Time{}, classify.ScopeModel, true}},
		// Context windows.
		{"openai-400-context-length-exceeded", want{classify.ContextLengthExceeded, false, 0, time.Time{}, classify.ScopeRequest, true}},
		{"anthropic-400-prompt-too-long", want{classify.ContextLengthExceeded, false, 0, time.Time{}, classify.ScopeRequest, true}},
		{"gemini-400-input-token-count", want{classify.ContextLengthExceeded, false, 0, time.Time{}, classify.ScopeRequest, true}},
		// Missing anthropic-version header.
		{"anthropic-400-missing-version-header", want{classify.InvalidRequest, false, 0, time.Time{}, classify.ScopeRequest, false}},
		// HTML pages from proxies.
		{"cloudflare-502-html", want{classify.ServerError, true, 0, time.Time{}, classify.ScopeModel, true}},
		{"cloudflare-504-html-gateway-timeout", want{classify.ServerError, true, 0, time.Time{}, classify.ScopeModel, true}},
		{"nginx-502-html", want{classify.ServerError, true, 0, time.Time{}, classify.ScopeModel, true}},
		// Transport.
		{"transport-timeout", want{classify.Timeout, true, 0, time.Time{}, classify.ScopeModel, true}},
		{"transport-connection-refused", want{classify.Network, true, 0, time.Time{}, classify.ScopeProvider, true}},
		// Hints: the largest relevant one wins.
		{"anthropic-429-rate-limit-headers", want{classify.RateLimited, true, 38 * time.Second, time.Time{}, classify.ScopeModel, true}},
		{"openai-429-rate-limit-tpm", want{classify.RateLimited, true, 10 * time.Second, time.Time{}, classify.ScopeModel, true}},
		{"azure-429-rate-limit-reset-tokens-55", want{classify.RateLimited, true, 55 * time.Second, time.Time{}, classify.ScopeModel, true}},
		{"azure-429-reset-zero-unknown", want{classify.RateLimited, true, 0, time.Time{}, classify.ScopeModel, true}},
		{"openai-503-retry-after-http-date", want{classify.Overloaded, true, 60 * time.Second, time.Time{}, classify.ScopeModel, true}},
		{"openai-500-x-should-retry-false", want{classify.ServerError, false, 0, time.Time{}, classify.ScopeModel, true}},
		{"openrouter-429-free-models-per-day", want{classify.QuotaExhausted, false, 0, time.Date(2026, 8, 22, 0, 0, 0, 0, time.UTC), classify.ScopeKey, true}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			v := classify.Classify(fixtureInput(t, tt.fixture))
			got := want{v.Class, v.Retryable, v.Wait, v.Until, v.Scope, v.Fallback}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("verdict (-want +got):\n%s\nmessage: %s", diff, v.Message)
			}
		})
	}
}

func TestHTMLMessage(t *testing.T) {
	v := classify.Classify(fixtureInput(t, "cloudflare-502-html"))
	want := `502 html error page from proxy: "api.openai.com | 502: Bad gateway"`
	if !strings.HasPrefix(v.Message, want) {
		t.Errorf("message = %q, want prefix %q", v.Message, want)
	}
	if strings.Contains(v.Message, "<") {
		t.Errorf("message carries markup: %q", v.Message)
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"key sk-ant-api03-AbCdEfGhIjKlMnOp-QrStUvWx done", "key sk-ant-*** done"},
		{"sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "sk-proj-***"},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def", "Authorization: Bearer ***"},
		{"?key=AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW&x=1", "?key=AIza***&x=1"},
		{"xai-AbCdEfGhIjKlMnOpQrStUv and gsk_AbCdEfGhIjKlMnOpQrSt", "xai-*** and gsk_***"},
		{"Incorrect API key provided: xa***yz.", "Incorrect API key provided: xa***yz."},
		{"task-sk-12345678 is not a key", "task-sk-12345678 is not a key"},
		{"short sk-abc stays", "short sk-abc stays"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := classify.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1s", time.Second, true},
		{"6m0s", 6 * time.Minute, true},
		{"20ms", 20 * time.Millisecond, true},
		{"37s", 37 * time.Second, true},
		{"0.539477544s", 539477544 * time.Nanosecond, true},
		{"125h58m35.9s", 125*time.Hour + 58*time.Minute + 35900*time.Millisecond, true},
		{"55", 55 * time.Second, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"-1", 0, false},
		{"", 0, false},
		{"soon", 0, false},
		{"9999999999999", 0, false},
		{"NaN", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := classify.ParseDuration(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseDuration(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"22", 22 * time.Second, true},
		{"1.25", 1250 * time.Millisecond, true},
		{"Fri, 21 Aug 2026 14:03:00 GMT", time.Minute, true},
		{"Fri, 21 Aug 2026 14:00:00 GMT", 0, true}, // in the past
		{"tomorrow", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := classify.ParseRetryAfter(tt.in, fixedNow)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestWaitHints(t *testing.T) {
	body429 := []byte(`{"error":{"message":"slow down","type":"rate_limit_error","code":"rate_limit_exceeded"}}`)
	tests := []struct {
		name   string
		header map[string]string
		body   []byte
		want   time.Duration
	}{
		{"retry-after-ms beats smaller retry-after", map[string]string{"retry-after-ms": "2500", "retry-after": "2"}, body429, 2500 * time.Millisecond},
		{"reset of an exhausted limit", map[string]string{"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6m0s"}, body429, 6 * time.Minute},
		{"reset of a limit with room is ignored", map[string]string{"x-ratelimit-remaining-requests": "3", "x-ratelimit-reset-requests": "6m0s"}, body429, 0},
		{"anthropic reset of a non-exhausted limit is ignored", map[string]string{"anthropic-ratelimit-tokens-remaining": "100", "anthropic-ratelimit-tokens-reset": "2026-08-21T14:10:00Z"}, body429, 0},
		{"azure reset 0 is unknown", map[string]string{"x-rate-limit-reset-tokens": "0"}, body429, 0},
		{"message: please retry in", nil, []byte(`{"error":{"code":429,"message":"Please retry in 36.4s.","status":"RESOURCE_EXHAUSTED"}}`), 36400 * time.Millisecond},
		{"message: retry after N seconds", nil, []byte(`{"error":{"code":"429","message":"Please retry after 60 seconds."}}`), time.Minute},
		{"garbage retry-after", map[string]string{"retry-after": "soon-ish"}, body429, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			v := classify.Classify(classify.Input{Status: 429, Header: h, Body: tt.body, Now: fixedNow})
			if v.Wait != tt.want {
				t.Errorf("wait = %v, want %v (%s)", v.Wait, tt.want, v.Message)
			}
		})
	}
}

func TestNextPacificMidnightAcrossDST(t *testing.T) {
	tests := []struct {
		now, want time.Time
	}{
		// Winter (PST, UTC-8).
		{time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC), time.Date(2026, 1, 16, 8, 0, 0, 0, time.UTC)},
		// Summer (PDT, UTC-7), before local midnight in UTC terms.
		{time.Date(2026, 8, 21, 6, 59, 0, 0, time.UTC), time.Date(2026, 8, 21, 7, 0, 0, 0, time.UTC)},
		// The day DST ends (2026-11-01): midnight that night is PST.
		{time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC), time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)},
	}
	body := []byte(`{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]}]}}`)
	for _, tt := range tests {
		t.Run(tt.now.Format(time.RFC3339), func(t *testing.T) {
			v := classify.Classify(classify.Input{Provider: "gemini", Status: 429, Body: body, Now: tt.now})
			if !v.Until.Equal(tt.want) {
				t.Errorf("until = %v, want %v", v.Until, tt.want)
			}
		})
	}
}

func TestClassifyStreamError(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		ok    bool
		class classify.Class
	}{
		{"anthropic error event", `{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"}}`, true, classify.Overloaded},
		{"responses error event", `{"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached","param":null,"sequence_number":4}`, true, classify.RateLimited},
		{"responses failed", `{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}`, true, classify.ServerError},
		{"openrouter chunk", `{"id":"gen-1","error":{"code":429,"message":"Rate limit exceeded"},"choices":[{"finish_reason":"error"}]}`, true, classify.RateLimited},
		{"gemini block", `{"promptFeedback":{"blockReason":"SAFETY"}}`, true, classify.ContentFiltered},
		{"ordinary delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`, false, ""},
		{"responses created", `{"type":"response.created","response":{"status":"in_progress","error":null}}`, false, ""},
		{"openai chunk", `{"id":"c1","choices":[{"delta":{"content":"x"},"finish_reason":null}]}`, false, ""},
		{"not json", `[DONE]`, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := classify.ClassifyStreamError("", []byte(tt.data), nil)
			if ok != tt.ok || v.Class != tt.class {
				t.Errorf("got (%q, %v), want (%q, %v): %s", v.Class, ok, tt.class, tt.ok, v.Message)
			}
		})
	}
}

func TestTransportErrorValues(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		class classify.Class
	}{
		{"deadline", fmt.Errorf("call: %w", context.DeadlineExceeded), classify.Timeout},
		{"canceled", fmt.Errorf("call: %w", context.Canceled), classify.Unknown},
		{"eof", errors.New("EOF"), classify.Network},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := classify.Classify(classify.Input{Err: tt.err, Now: fixedNow})
			if v.Class != tt.class {
				t.Errorf("class = %q, want %q (%s)", v.Class, tt.class, v.Message)
			}
		})
	}
}

func TestBodyLimitAndOddInputs(t *testing.T) {
	big := append([]byte(`{"error":{"message":"`), make([]byte, 1<<20)...)
	for i := 21; i < len(big); i++ {
		big[i] = 'a'
	}
	tests := []struct {
		name   string
		status int
		body   []byte
		class  classify.Class
	}{
		{"1 MiB unterminated", 500, big, classify.ServerError},
		{"null", 500, []byte("null"), classify.ServerError},
		{"array of numbers", 400, []byte("[1,2,3]"), classify.InvalidRequest},
		{"200 plain ok", 200, []byte(`{"id":"x","choices":[]}`), classify.Unknown},
		{"418 teapot", 418, []byte("I'm a teapot"), classify.InvalidRequest},
		{"status 0 no error", 0, nil, classify.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := classify.Classify(classify.Input{Status: tt.status, Body: tt.body, Now: fixedNow})
			if v.Class != tt.class {
				t.Errorf("class = %q, want %q (%s)", v.Class, tt.class, v.Message)
			}
			checkVerdictInvariants(t, v)
		})
	}
}

func TestGuessProvider(t *testing.T) {
	tests := []struct {
		fixture, want string
	}{
		{"anthropic-529-overloaded", "anthropic"},
		{"bedrock-400-input-too-long", "bedrock"},
		{"azure-429-retry-after-60", "azure"},
		{"groq-429-tpm-try-again", "groq"},
		{"mistral-429-rate-limited", "mistral"},
		{"xai-400-bad-key", "xai"},
		{"gemini-503-overloaded", "gemini"},
		{"openrouter-402-credits", "openrouter"},
		{"cloudflare-502-html", ""},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			in := fixtureInput(t, tt.fixture)
			if got := classify.GuessProvider(in.Header, in.Body); got != tt.want {
				t.Errorf("GuessProvider = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAdvice(t *testing.T) {
	tests := []struct {
		fixture, contains string
	}{
		{"anthropic-401-invalid-key", "fix the key in the client's env block"},
		{"openai-400-context-length-exceeded", "fall back to a model with a larger context window"},
		{"anthropic-429-enforced-spend-limit", "2026-09-01T00:00:00Z"},
		{"deepseek-402-insufficient-balance", "add credits"},
		{"gemini-429-per-minute", "retry in 26s"},
		{"anthropic-400-missing-version-header", "anthropic-version"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			a := classify.Classify(fixtureInput(t, tt.fixture)).Advice()
			if !strings.Contains(a, tt.contains) {
				t.Errorf("Advice() = %q, want it to contain %q", a, tt.contains)
			}
		})
	}
}

func ExampleClassify() {
	body := []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CU"}`)
	v := classify.Classify(classify.Input{Provider: "anthropic", Status: 529, Body: body})
	fmt.Println(v.Class, v.Retryable, v.Scope, v.Fallback)
	fmt.Println(v.Message)

	body = []byte(`{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`)
	v = classify.Classify(classify.Input{Provider: "openai", Status: 429, Header: http.Header{"Retry-After": {"1"}}, Body: body})
	fmt.Println(v.Class, v.Retryable)
	fmt.Println(v.Advice())
	// Output:
	// overloaded true model true
	// 529 overloaded_error: Overloaded (request-id req_011CU)
	// quota_exhausted false
	// add credits or raise the spend limit; fall back to another key or provider meanwhile (retrying will not help)
}

func ExampleRedact() {
	fmt.Println(classify.Redact("401: bad key sk-ant-api03-AbCdEfGhIjKlMnOpQrSt"))
	// Output: 401: bad key sk-ant-***
}

func ExampleClassifyStreamError() {
	// One event's data from an Anthropic stream that broke after text began.
	data := []byte(`{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"}}`)
	if v, ok := classify.ClassifyStreamError("anthropic", data, nil); ok {
		fmt.Println(v.Class, v.Retryable)
		fmt.Println(v.Message)
	}
	// Output:
	// overloaded true
	// 200 overloaded_error (in stream): Overloaded
}

func ExampleVerdict_Advice() {
	body := []byte(`{"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]}]}}`)
	now := time.Date(2026, 8, 21, 14, 2, 0, 0, time.UTC)
	v := classify.Classify(classify.Input{Provider: "gemini", Status: 429, Body: body, Now: now})
	fmt.Println(v.Class, v.Until.Format(time.RFC3339))
	fmt.Println(v.Advice())
	// Output:
	// quota_exhausted 2026-08-22T07:00:00Z
	// the quota resets at 2026-08-22T07:00:00Z; add credits or upgrade the tier; fall back to another key or provider meanwhile (retrying will not help)
}

func TestLongFieldsStayBounded(t *testing.T) {
	long := strings.Repeat("x", 5000)
	body := []byte(`{"error":{"type":"` + long + `","message":"` + long + `","code":"` + long + `"}}`)
	h := http.Header{"X-Request-Id": {long}}
	v := classify.Classify(classify.Input{Status: 500, Header: h, Body: body, Now: fixedNow})
	checkVerdictInvariants(t, v)
	if len(v.ProviderType) > 130 || len(v.RequestID) > 90 {
		t.Errorf("provider_type %d bytes, request_id %d bytes", len(v.ProviderType), len(v.RequestID))
	}
}

// TestHeaderNames checks every header the classifier reads is found under
// its canonical and its lower-case spelling.
func TestHeaderNames(t *testing.T) {
	body := []byte(`{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`)
	tests := []struct {
		name, value string
		check       func(classify.Verdict) bool
	}{
		{"retry-after", "5", func(v classify.Verdict) bool { return v.Wait == 5*time.Second }},
		{"retry-after-ms", "5000", func(v classify.Verdict) bool { return v.Wait == 5*time.Second }},
		{"x-should-retry", "false", func(v classify.Verdict) bool { return !v.Retryable }},
		{"request-id", "req_1", func(v classify.Verdict) bool { return v.RequestID == "req_1" }},
		{"x-request-id", "req_2", func(v classify.Verdict) bool { return v.RequestID == "req_2" }},
		{"apim-request-id", "a-3", func(v classify.Verdict) bool { return v.RequestID == "a-3" }},
		{"x-amzn-requestid", "b-4", func(v classify.Verdict) bool { return v.RequestID == "b-4" }},
		{"x-amzn-request-id", "b-5", func(v classify.Verdict) bool { return v.RequestID == "b-5" }},
		{"x-generation-id", "gen-6", func(v classify.Verdict) bool { return v.RequestID == "gen-6" }},
		{"cf-ray", "ray-7", func(v classify.Verdict) bool { return v.RequestID == "ray-7" }},
		{"x-amzn-errortype", "ServiceUnavailableException:http://internal", func(v classify.Verdict) bool { return v.Class == classify.ServerError }},
	}
	for _, tt := range tests {
		for _, name := range []string{tt.name, http.CanonicalHeaderKey(tt.name)} {
			t.Run(name, func(t *testing.T) {
				v := classify.Classify(classify.Input{Status: 429, Header: http.Header{name: {tt.value}}, Body: body, Now: fixedNow})
				if !tt.check(v) {
					t.Errorf("%s: %s not honoured: %+v", name, tt.value, v)
				}
			})
		}
	}
	for _, pair := range [][2]string{
		{"x-ratelimit-reset-requests", "x-ratelimit-remaining-requests"},
		{"x-ratelimit-reset-tokens", "x-ratelimit-remaining-tokens"},
		{"x-rate-limit-reset-tokens", "x-rate-limit-remaining-tokens"},
	} {
		t.Run(pair[0], func(t *testing.T) {
			h := http.Header{}
			h.Set(pair[0], "7s")
			h.Set(pair[1], "0")
			if v := classify.Classify(classify.Input{Status: 429, Header: h, Body: body, Now: fixedNow}); v.Wait != 7*time.Second {
				t.Errorf("wait = %v, want 7s", v.Wait)
			}
		})
	}
	for _, lim := range []string{"requests", "tokens", "input-tokens", "output-tokens"} {
		t.Run("anthropic-"+lim, func(t *testing.T) {
			h := http.Header{}
			h.Set("anthropic-ratelimit-"+lim+"-reset", "2026-08-21T14:02:09Z")
			h.Set("anthropic-ratelimit-"+lim+"-remaining", "0")
			if v := classify.Classify(classify.Input{Status: 429, Header: h, Body: body, Now: fixedNow}); v.Wait != 9*time.Second {
				t.Errorf("wait = %v, want 9s", v.Wait)
			}
		})
	}
}
