package gateway

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func attempt(target string, status int, class classify.Class, retryable bool, wait time.Duration, msg, rid string) resilience.AttemptError {
	return resilience.AttemptError{Target: target, Err: &provider.Error{Verdict: classify.Verdict{Status: status, Class: class,
		Retryable: retryable, Wait: wait, Message: msg, RequestID: rid}}}
}

// errorCases are the engine outcomes and gateway faults whose client-facing
// responses are pinned in testdata/errors.txtar.
func errorCases() []struct {
	name string
	err  *apiError
} {
	limited := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrExhausted, RetryAt: t0.Add(7500 * time.Millisecond),
		Attempts: []resilience.AttemptError{
			attempt("openai/gpt-4o", 429, classify.RateLimited, true, 5*time.Second, "429 rate_limit_exceeded: Rate limit reached (request-id req_a)", "req_a"),
			attempt("anthropic/claude", 429, classify.RateLimited, true, 7*time.Second, "429 rate_limit_error: Number of requests exceeded (request-id req_b)", "req_b"),
		}}
	down := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrExhausted, Attempts: []resilience.AttemptError{
		attempt("anthropic/claude", 529, classify.Overloaded, true, 0, "529 overloaded_error: Overloaded (request-id req_c)", "req_c"),
		attempt("openai/gpt-4o", 500, classify.ServerError, true, 0, "500 server_error: The server had an error (request-id req_d)", "req_d"),
	}}
	badKey := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrRejected, Attempts: []resilience.AttemptError{
		attempt("openai/gpt-4o", 401, classify.Auth, false, 0, "401 invalid_api_key: Incorrect API key provided: sk-…abcd (request-id req_e)", "req_e"),
	}}
	tooLong := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrRejected, Attempts: []resilience.AttemptError{
		attempt("anthropic/claude", 400, classify.ContextLengthExceeded, false, 0, "400 invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum (request-id req_f)", "req_f"),
	}}
	credit := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrRejected, Attempts: []resilience.AttemptError{
		attempt("deepseek/deepseek-chat", 402, classify.QuotaExhausted, false, 0, "402 invalid_request_error: Insufficient Balance", ""),
	}}
	open := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrNoTarget, RetryAt: t0.Add(42 * time.Second),
		Skipped: []resilience.Skip{{Target: "openai/gpt-4o", Reason: "breaker open"}}}
	cooling := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrNoTarget, RetryAt: t0.Add(3 * time.Second),
		Skipped: []resilience.Skip{{Target: "openai/gpt-4o", Reason: "rate-limit cooldown", Until: t0.Add(3 * time.Second), RateLimited: true}}}
	deadline := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrDeadline, Attempts: []resilience.AttemptError{
		attempt("openai/gpt-4o", 0, classify.Timeout, true, 0, "timeout: no response headers within 30s", ""),
	}}
	// A fallback's own terminal fault is not the request's when an earlier
	// target failed for another reason: 503 naming both, not the last 401/402.
	downThenBadKey := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrRejected, Attempts: []resilience.AttemptError{
		attempt("anthropic/claude", 529, classify.Overloaded, true, 0, "529 overloaded_error: Overloaded (request-id req_g)", "req_g"),
		attempt("openai/gpt-4o", 401, classify.Auth, false, 0, "401 invalid_api_key: Incorrect API key provided: sk-…abcd (request-id req_h)", "req_h"),
	}}
	limitedThenCredit := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrRejected, RetryAt: t0.Add(20 * time.Second),
		Attempts: []resilience.AttemptError{
			attempt("openai/gpt-4o", 429, classify.RateLimited, true, 20*time.Second, "429 rate_limit_exceeded: Rate limit reached (request-id req_i)", "req_i"),
			attempt("anthropic/claude", 400, classify.QuotaExhausted, false, 0, "400 invalid_request_error: Your credit balance is too low (request-id req_j)", "req_j"),
		}}
	bothBadKeys := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrRejected, Attempts: []resilience.AttemptError{
		attempt("anthropic/claude", 401, classify.Auth, false, 0, "401 authentication_error: invalid x-api-key (request-id req_k)", "req_k"),
		attempt("openai/gpt-4o", 401, classify.Auth, false, 0, "401 invalid_api_key: Incorrect API key provided: sk-…abcd (request-id req_l)", "req_l"),
	}}
	// While a key's breaker holds a bad key (or no credit), calls get the
	// original failure with when it was first seen, not "503 breaker open".
	keyFault := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrNoTarget,
		Skipped: []resilience.Skip{{Target: "openai/gpt-4o", Reason: "key openai: breaker open", Until: t0.Add(40 * time.Second),
			Since: t0.Add(-20 * time.Second), Fault: badKey.Attempts[0].Err}}}
	creditFault := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrNoTarget,
		Skipped: []resilience.Skip{
			{Target: "anthropic/claude", Reason: "key anthropic: breaker open", Since: t0.Add(-time.Hour), Fault: limitedThenCredit.Attempts[1].Err},
			{Target: "deepseek/deepseek-chat", Reason: "key deepseek: breaker open", Since: t0.Add(-time.Minute), Fault: credit.Attempts[0].Err}}}
	// A request rejected on a route with more targets: the request's fault.
	invalidMulti := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrRejected,
		Attempts: []resilience.AttemptError{attempt("anthropic/claude", 400, classify.InvalidRequest, false, 0,
			"400 invalid_request_error: messages: at least one message is required (request-id req_m)", "req_m")},
		Skipped: []resilience.Skip{{Target: "openai/gpt-4o", Reason: "invalid_request never falls back", Ineligible: true}}}
	filtered := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrRejected,
		Attempts: []resilience.AttemptError{attempt("azure/gpt-4o", 400, classify.ContentFiltered, false, 0,
			"400 content_filter: The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", "")},
		Skipped: []resilience.Skip{{Target: "anthropic/claude", Reason: "content_filtered: route does not fall back", Ineligible: true}}}
	filtered.Attempts[0].Err.Verdict.ProviderType = "content_filter"
	// A server wait beyond max_client_wait: no retry-after, no retry.
	longWait := &resilience.RouteError{Route: "default", ClientWait: 30 * time.Second, Err: resilience.ErrExhausted, RetryAt: t0.Add(90 * time.Second),
		Attempts: []resilience.AttemptError{attempt("openai/gpt-4o", 429, classify.RateLimited, true, 90*time.Second,
			"429 rate_limit_exceeded: Rate limit reached (request-id req_n)", "req_n")},
		Skipped: []resilience.Skip{{Target: "openai/gpt-4o", Reason: "server asked to wait 1m30s, more than max_wait 1m0s"}}}
	return []struct {
		name string
		err  *apiError
	}{
		{"key-fault-breaker-open", fromEngine(keyFault, t0)},
		{"no-credit-on-every-key", fromEngine(creditFault, t0)},
		{"invalid-request-multi-target", fromEngine(invalidMulti, t0)},
		{"content-filtered-multi-target", fromEngine(filtered, t0)},
		{"rate-limit-beyond-client-wait", fromEngine(longWait, t0)},
		{"down-then-bad-key", fromEngine(downThenBadKey, t0)},
		{"rate-limited-then-no-credit", fromEngine(limitedThenCredit, t0)},
		{"every-key-bad", fromEngine(bothBadKeys, t0)},
		{"all-rate-limited", fromEngine(limited, t0)},
		{"all-down", fromEngine(down, t0)},
		{"upstream-401", fromEngine(badKey, t0)},
		{"context-too-long", fromEngine(tooLong, t0)},
		{"out-of-credit", fromEngine(credit, t0)},
		{"breakers-open", fromEngine(open, t0)},
		{"rate-limit-cooldown", fromEngine(cooling, t0)},
		{"deadline", fromEngine(deadline, t0)},
		{"unknown-route", fromEngine(&resilience.RouteError{Route: "x", Err: resilience.ErrUnknownRoute}, t0)},
		{"stream-broken", fromStream(down.Attempts[0].Err)},
		{"gateway-key", errUnauthorized()},
		{"too-large", errTooLarge(10 << 20)},
		{"unknown-model", errUnknownModel(&catalog.UnknownModelError{Name: "gpt-5", Routes: []string{"default", "fast"}, Example: "openai"})},
		{"bad-json", errBadRequest("request body is not a JSON object: malformed JSON object")},
	}
}

// render is the golden form of an error response in a dialect.
func render(e *apiError, dialect string) string {
	rec := httptest.NewRecorder()
	writeError(rec, dialect, e)
	var b strings.Builder
	fmt.Fprintf(&b, "status: %d\n", rec.Code)
	keys := make([]string, 0, len(rec.Header()))
	for k := range rec.Header() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, rec.Header().Get(k))
	}
	b.WriteString("\n")
	b.Write(rec.Body.Bytes())
	b.WriteString("\n")
	return b.String()
}

func TestErrorGolden(t *testing.T) {
	path := filepath.Join("testdata", "errors.txtar")
	var got txtar.Archive
	got.Comment = []byte("Client-facing error responses, per engine outcome and dialect. Regenerate: go test ./gateway -run TestErrorGolden -update\n")
	for _, c := range errorCases() {
		for _, d := range []string{DialectOpenAI, DialectAnthropic} {
			got.Files = append(got.Files, txtar.File{Name: c.name + "/" + d, Data: []byte(render(c.err, d))})
		}
	}
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, txtar.Format(&got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	want := txtar.Parse(data)
	wantFiles := map[string]string{}
	for _, f := range want.Files {
		wantFiles[f.Name] = string(f.Data)
	}
	for _, f := range got.Files {
		if d := cmp.Diff(wantFiles[f.Name], string(f.Data)); d != "" {
			t.Errorf("%s (-golden +got):\n%s", f.Name, d)
		}
		delete(wantFiles, f.Name)
	}
	for name := range wantFiles {
		t.Errorf("golden %s has no case", name)
	}
}

// TestErrorInvariants checks properties every error response must have:
// one line, no leading status (the SDKs print it), a retry-after within
// max_client_wait, x-should-retry: true only when no attempt was spent, and
// false with no retry-after on every failure of the request or the key.
func TestErrorInvariants(t *testing.T) {
	for _, c := range errorCases() {
		t.Run(c.name, func(t *testing.T) {
			e := c.err
			if e.message == "" || strings.ContainsAny(e.message, "\r\n") || len(e.message) > classify.MaxLine+len("…") {
				t.Errorf("message %q is not one line", e.message)
			}
			if strings.HasPrefix(e.message, strconv.Itoa(e.status)+" ") {
				t.Errorf("message %q repeats the status", e.message)
			}
			if e.retryAfter < 0 || e.retryAfter > 30*time.Second {
				t.Errorf("retry-after %v beyond max_client_wait", e.retryAfter)
			}
			if e.retry == "true" && e.attempts > 0 {
				t.Errorf("x-should-retry: true after %d attempts", e.attempts)
			}
			if e.retry == "" {
				t.Errorf("no x-should-retry: %+v", e)
			}
			if e.status >= 400 && e.status < 500 && e.status != 429 && e.status != 408 && (e.retry != "false" || e.retryAfter != 0) {
				t.Errorf("terminal %d with x-should-retry %q retry-after %v", e.status, e.retry, e.retryAfter)
			}
			for _, d := range []string{DialectOpenAI, DialectAnthropic} {
				rec := httptest.NewRecorder()
				writeError(rec, d, e)
				if !bytes.Contains(rec.Body.Bytes(), []byte(`"error"`)) {
					t.Errorf("%s body %s", d, rec.Body)
				}
			}
		})
	}
	if e := fromEngine(errors.New("plain"), t0); e.status != 503 {
		t.Errorf("a non-route error maps to %d", e.status)
	}
}
