package gateway

// Errors that tell the truth (issue 10, items 2, 3, 4 and 8): each case
// goes through the real gateway, engine and adapters to the mock on
// 127.0.0.1, in both dialects.

import (
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
)

const truthConfig = mockProviders + `  badkey-o: {type: openai, base_url: MOCK/v1, api_key: test-bad-key}
  badkey-a: {type: anthropic, base_url: MOCK, api_key: test-bad-key}
  broke-a: {type: anthropic, base_url: MOCK, api_key: test-broke-key}
  broke-o: {type: openai, base_url: MOCK/v1, api_key: test-broke-key}
routes:
  default:
    targets: [anthropic/claude-sonnet-4-5]
  bad-key-o:
    targets: [badkey-o/gpt-4o+fault=401]
  bad-key-a:
    targets: [badkey-a/claude-sonnet-4-5+fault=401, openai/gpt-4o+fault=401]
  credit-a:
    targets: [broke-a/claude-sonnet-4-5+fault=credit_low]
  quota-o:
    targets: [broke-o/gpt-4o+fault=insufficient_quota]
  invalid-multi:
    targets: [anthropic/claude-sonnet-4-5+fault=400, openai/gpt-4o]
  too-large-multi:
    targets: [openai/gpt-4o+fault=413, anthropic/claude-sonnet-4-5]
  overflow-multi:
    targets: [anthropic/claude-sonnet-4-5+fault=context_overflow, openai/gpt-4o]
  limited-once:
    targets: ["openai/gpt-4o-once+fault=429:7"]
    retry: {max_attempts: 1}
  limited-spent:
    targets: ["anthropic/claude-sonnet-4-5-spent+fault=429:1"]
  limited-long:
    targets: ["openai/gpt-4o-long+fault=429:90"]
  down:
    targets: [anthropic/claude-sonnet-4-5-down+fault=529]
  long-message:
    targets: ["anthropic/claude-sonnet-4-5-msg+fault=429:1"]
    retry: {max_attempts: 1}
models:
  "anthropic/claude-sonnet-4-5+fault=context_overflow": {context_window: 200000}
`

// dialectCase is one client dialect: its path and request body.
type dialectCase struct {
	name, path string
	body       func(model string, extra string) string
	hdr        []string
}

func dialects() []dialectCase {
	return []dialectCase{
		{DialectOpenAI, "/v1/chat/completions", func(m, x string) string { return oaBody(m, false, x) }, nil},
		{DialectAnthropic, "/v1/messages", func(m, x string) string { return anBody(m, false, x) }, []string{"anthropic-version", "2023-06-01"}},
	}
}

// errorFields are the parts of an error body a client reads: the message,
// the error type and (OpenAI) the code.
func errorFields(t *testing.T, dialect string, body []byte) (msg, typ, code string) {
	t.Helper()
	m := decodeJSON(t, body)
	msg, _ = dig(m, "error", "message").(string)
	typ, _ = dig(m, "error", "type").(string)
	code, _ = dig(m, "error", "code").(string)
	if dialect == DialectAnthropic && dig(m, "type") != "error" {
		t.Errorf("anthropic error body without type error: %s", body)
	}
	return msg, typ, code
}

// sdkMessage is err.message as the official SDKs build it: "<status> "
// then the error's message (OpenAI) or the whole body as JSON (Anthropic).
func sdkMessage(status int, dialect, msg string, body []byte) string {
	if dialect == DialectAnthropic {
		return itoa(status) + " " + string(body)
	}
	return itoa(status) + " " + msg
}

func itoa(n int) string { return strconv.Itoa(n) }

// noDoubledStatus fails when a client SDK's message would repeat the status.
func noDoubledStatus(t *testing.T, r reply, dialect, msg string) {
	t.Helper()
	s := itoa(r.status)
	if strings.HasPrefix(msg, s+" ") || strings.Contains(sdkMessage(r.status, dialect, msg, r.body), `"message":"`+s+" ") {
		t.Errorf("message %q starts with the status %s again (the SDKs print it first)", msg, s)
	}
}

// A bad key or an empty balance is the first call's truth and every later
// call's, while the key's breaker is open: the original status and line,
// with its request id and when it was first seen, never a 503 with
// retry-after; and the key is called upstream once.
func TestTruthKeyFaultWhileBreakerOpen(t *testing.T) {
	cases := []struct {
		route, provider string
		status          int
		typOAI, typAnt  string
		want            string // in the message
	}{
		{"bad-key-o", "badkey-o", 401, "authentication_error", "authentication_error", "Incorrect API key provided"},
		{"bad-key-a", "badkey-a", 401, "authentication_error", "authentication_error", "invalid x-api-key"},
		{"credit-a", "broke-a", 400, "invalid_request_error", "invalid_request_error", "credit balance is too low"},
		{"quota-o", "broke-o", 429, "insufficient_quota", "billing_error", "exceeded your current quota"},
	}
	for _, d := range dialects() {
		for _, c := range cases {
			t.Run(d.name+"/"+c.route, func(t *testing.T) {
				st := newStackConfig(t, truthConfig, nil)
				var firstID string
				for i := range 3 {
					r := st.post(t, d.path, d.body(c.route, ""), d.hdr...)
					msg, typ, _ := errorFields(t, d.name, r.body)
					t.Logf("call %d: %d retry-after=%q x-should-retry=%q attempts=%q target=%q %s", i+1, r.status,
						r.header.Get("Retry-After"), r.header.Get("X-Should-Retry"), r.header.Get("X-Llmguard-Attempts"), r.header.Get("X-Llmguard-Target"), r.body)
					if r.status != c.status {
						t.Errorf("call %d: status %d, want %d (the provider's own)", i+1, r.status, c.status)
					}
					if want := map[string]string{DialectOpenAI: c.typOAI, DialectAnthropic: c.typAnt}[d.name]; typ != want {
						t.Errorf("call %d: error type %q, want %q", i+1, typ, want)
					}
					if !strings.Contains(msg, c.want) {
						t.Errorf("call %d: message %q lacks the provider's %q", i+1, msg, c.want)
					}
					if ra := r.header.Get("Retry-After"); ra != "" {
						t.Errorf("call %d: retry-after %q on a failure that cannot clear by itself", i+1, ra)
					}
					if sr := r.header.Get("X-Should-Retry"); sr != "false" {
						t.Errorf("call %d: x-should-retry %q, want false", i+1, sr)
					}
					noDoubledStatus(t, r, d.name, msg)
					if i == 0 {
						firstID = st.mock.Requests()[0].RequestID
						if got, want := r.header.Get("X-Llmguard-Attempts"), strconv.Itoa(upstream(c.route)); got != want {
							t.Errorf("x-llmguard-attempts %q, want %s", got, want)
						}
					} else if !strings.Contains(msg, "first seen") {
						t.Errorf("call %d: message %q does not say when the failure was first seen", i+1, msg)
					}
					if firstID != "" && !strings.Contains(msg, firstID) {
						t.Errorf("call %d: message %q lacks the upstream request id %s", i+1, msg, firstID)
					}
					if !strings.HasPrefix(r.header.Get("X-Llmguard-Target"), c.provider+"/") {
						t.Errorf("call %d: x-llmguard-target %q", i+1, r.header.Get("X-Llmguard-Target"))
					}
				}
				n := 0
				for _, q := range st.mock.Requests() {
					if q.Provider != "" {
						n++
					}
				}
				if n != upstream(c.route) {
					t.Errorf("upstream requests over 3 calls: %d, want %d", n, upstream(c.route))
				}
			})
		}
	}
}

// upstream is how many upstream requests a key-fault route makes: one per
// key (bad-key-a has two targets, both with bad keys).
func upstream(route string) int {
	if route == "bad-key-a" {
		return 2
	}
	return 1
}

// A request the provider rejected (invalid, too large, over the context
// window with no larger target) is the request's fault on every route: its
// own status and type, x-should-retry: false, no retry-after.
func TestTruthRequestFaultOnAnyRoute(t *testing.T) {
	cases := []struct {
		name, model, extra string
		status             int
		typOAI, typAnt     string
	}{
		{"invalid-multi", "invalid-multi", "", 400, "invalid_request_error", "invalid_request_error"},
		{"too-large-multi", "too-large-multi", "", 413, "invalid_request_error", "invalid_request_error"},
		{"overflow-multi", "overflow-multi", "", 400, "invalid_request_error", "invalid_request_error"},
		{"request-fallbacks", "anthropic/claude-sonnet-4-5+fault=400", `,"fallbacks":["openai/gpt-4o"]`, 400, "invalid_request_error", "invalid_request_error"},
	}
	for _, d := range dialects() {
		for _, c := range cases {
			t.Run(d.name+"/"+c.name, func(t *testing.T) {
				st := newStackConfig(t, truthConfig, nil)
				r := st.post(t, d.path, d.body(c.model, c.extra), d.hdr...)
				msg, typ, _ := errorFields(t, d.name, r.body)
				t.Logf("%d x-should-retry=%q retry-after=%q %s", r.status, r.header.Get("X-Should-Retry"), r.header.Get("Retry-After"), r.body)
				if r.status != c.status {
					t.Errorf("status %d, want %d", r.status, c.status)
				}
				if want := map[string]string{DialectOpenAI: c.typOAI, DialectAnthropic: c.typAnt}[d.name]; typ != want {
					t.Errorf("error type %q, want %q", typ, want)
				}
				if r.header.Get("X-Should-Retry") != "false" || r.header.Get("Retry-After") != "" {
					t.Errorf("x-should-retry %q retry-after %q", r.header.Get("X-Should-Retry"), r.header.Get("Retry-After"))
				}
				noDoubledStatus(t, r, d.name, msg)
				rid := st.mock.Requests()[0].RequestID
				if !strings.Contains(msg, rid) || r.header.Get("X-Llmguard-Upstream-Request-Id") != rid {
					t.Errorf("request id %s missing: message %q, header %q", rid, msg, r.header.Get("X-Llmguard-Upstream-Request-Id"))
				}
				if r.header.Get("X-Llmguard-Attempts") != "1" || r.header.Get("X-Llmguard-Target") == "" {
					t.Errorf("x-llmguard-attempts %q x-llmguard-target %q", r.header.Get("X-Llmguard-Attempts"), r.header.Get("X-Llmguard-Target"))
				}
				if n := len(st.mock.Requests()); n != 1 {
					t.Errorf("%d upstream requests, want 1 (a rejected request is not sent elsewhere)", n)
				}
			})
		}
	}
}

// retry-after only when it is true, within max_client_wait; x-should-retry:
// false once the gateway spent its own retries or when no retry can pass
// within max_client_wait.
func TestTruthRetryHeaders(t *testing.T) {
	cases := []struct {
		route      string
		status     int
		retryAfter string // "" = none
		attempts   string
	}{
		{"limited-once", 429, "7", "1"},  // one attempt (max_attempts 1): the wait is true and short
		{"limited-spent", 429, "1", "4"}, // four attempts: retries spent
		{"limited-long", 429, "", "1"},   // 90 s > max_client_wait: no retry-after
		{"down", 503, "", "4"},           // overloaded four times, no known end
	}
	for _, d := range dialects() {
		for _, c := range cases {
			t.Run(d.name+"/"+c.route, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					st := newStackConfig(t, truthConfig, nil)
					r := st.post(t, d.path, d.body(c.route, ""), d.hdr...)
					msg, _, _ := errorFields(t, d.name, r.body)
					t.Logf("%d retry-after=%q x-should-retry=%q attempts=%q %s", r.status, r.header.Get("Retry-After"),
						r.header.Get("X-Should-Retry"), r.header.Get("X-Llmguard-Attempts"), r.body)
					if r.status != c.status {
						t.Errorf("status %d, want %d", r.status, c.status)
					}
					if got := r.header.Get("Retry-After"); got != c.retryAfter {
						t.Errorf("retry-after %q, want %q", got, c.retryAfter)
					}
					if got := r.header.Get("X-Should-Retry"); got != "false" {
						t.Errorf("x-should-retry %q, want false: the gateway spent its retries", got)
					}
					if got := r.header.Get("X-Llmguard-Attempts"); got != c.attempts {
						t.Errorf("x-llmguard-attempts %q, want %s", got, c.attempts)
					}
					noDoubledStatus(t, r, d.name, msg)
				})
			})
		}
	}
}

// The upstream message reaches the client whole (here Anthropic's 440-byte
// rate-limit message), on one line.
func TestTruthFullMessage(t *testing.T) {
	for _, d := range dialects() {
		t.Run(d.name, func(t *testing.T) {
			st := newStackConfig(t, truthConfig, nil)
			r := st.post(t, d.path, d.body("long-message", ""), d.hdr...)
			msg, _, _ := errorFields(t, d.name, r.body)
			const tail = "to discuss your options for a rate limit increase."
			if !strings.Contains(msg, tail) || strings.Contains(msg, "…") || strings.ContainsAny(msg, "\r\n") {
				t.Errorf("message not whole on one line: %q", msg)
			}
		})
	}
}
