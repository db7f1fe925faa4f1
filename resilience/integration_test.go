package resilience_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// mockEngine runs the mock and an engine whose anthropic, openai and
// gemini adapters point at it, over HTTP on an in-memory network: run it in
// a synctest bubble, where backoff takes virtual time. Backoff waits are
// recorded from the engine's retry events.
type mockEngine struct {
	srv    *mock.Server
	eng    *resilience.Engine
	mu     sync.Mutex
	sleeps []time.Duration
}

func (m *mockEngine) Sleeps() []time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]time.Duration(nil), m.sleeps...)
}

func newMockEngine(t *testing.T, route *config.Route) *mockEngine {
	t.Helper()
	m := &mockEngine{}
	m.srv, m.eng = mockStack(t, nil, routes(route), func(o *resilience.Options) {
		o.OnEvent = func(e resilience.Event) {
			if e.Kind == resilience.EventRetry {
				m.mu.Lock()
				m.sleeps = append(m.sleeps, e.Wait)
				m.mu.Unlock()
			}
		}
	})
	return m
}

// requests counts the mock's requests for model (its "+fault=" marker, if
// any, removed: the mock logs the model proper).
func (m *mockEngine) requests(model string) int {
	model, _, _ = strings.Cut(model, "+")
	n := 0
	for _, r := range m.srv.Requests() {
		if r.Model == model {
			n++
		}
	}
	return n
}

// chat asks text on the engine's default route; an error fails the test.
func (m *mockEngine) chat(t *testing.T, text string) *resilience.Result {
	t.Helper()
	res, err := m.eng.Chat(context.Background(), &resilience.Call{Request: ask(text)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func ask(text string) *provider.Request {
	return &provider.Request{MaxTokens: 64, Messages: []provider.Message{{Role: provider.RoleUser,
		Content: []provider.Part{{Type: provider.PartText, Text: text}}}}}
}

func routeOf(ts ...string) *config.Route {
	r := &config.Route{Retry: config.Retry{MaxAttempts: 4, BaseDelay: 10 * time.Millisecond}}
	for _, t := range ts {
		r.Targets = append(r.Targets, config.Target{Target: t})
	}
	return r
}

func TestMockOverloadBurstRetriesSameTarget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const model = "claude-sonnet-4-5+fault=529,529,200"
		m := newMockEngine(t, routeOf("anthropic/"+model, "openai/gpt-4.1"))
		res := m.chat(t, "What is the capital of France")
		if res.Target != "anthropic/"+model || res.Attempts != 3 || res.Fallbacks != 0 {
			t.Errorf("result %+v", res)
		}
		if !strings.HasPrefix(res.Response.Text, "Mock answer from") {
			t.Errorf("text %q", res.Response.Text)
		}
		if n := m.requests(model); n != 3 {
			t.Errorf("mock saw %d requests, want 3", n)
		}
		if n := len(m.Sleeps()); n != 2 {
			t.Errorf("%d backoff sleeps, want 2", n)
		}
	})
}

func TestMockRetryAfterIsHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const model = "gpt-4.1+fault=rate_limit:7,200"
		m := newMockEngine(t, routeOf("openai/"+model))
		res := m.chat(t, "hi there")
		sleeps := m.Sleeps()
		if res.Attempts != 2 || len(sleeps) != 1 || sleeps[0] < 7*time.Second {
			t.Errorf("attempts %d, sleeps %v: want one wait of at least the server's 7s", res.Attempts, sleeps)
		}
	})
}

func TestMockLongRetryAfterMovesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const model = "gpt-4.1+fault=rate_limit:120"
		m := newMockEngine(t, routeOf("openai/"+model, "anthropic/claude-sonnet-4-5"))
		res := m.chat(t, "hi there")
		if res.Target != "anthropic/claude-sonnet-4-5" || len(m.Sleeps()) != 0 || m.requests(model) != 1 {
			t.Errorf("target %s, sleeps %v, %d requests: a 120s wait should move on at once", res.Target, m.Sleeps(), m.requests(model))
		}
		// With no target left, the call fails at once saying when to come back.
		m2 := newMockEngine(t, routeOf("openai/"+model))
		before := time.Now()
		_, err := m2.eng.Chat(context.Background(), &resilience.Call{Request: ask("hi there")})
		var re *resilience.RouteError
		if !errors.As(err, &re) || !re.AllRateLimited() {
			t.Fatalf("err = %v", err)
		}
		if re.RetryAt.Before(before.Add(119 * time.Second)) {
			t.Errorf("RetryAt %v not ~120s ahead", re.RetryAt)
		}
	})
}

func TestMockKeyScopeSkipsSiblings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bad = "gpt-4.1+fault=insufficient_quota"
		m := newMockEngine(t, routeOf("openai/"+bad, "openai/gpt-4.1-mini", "anthropic/claude-sonnet-4-5"))
		res := m.chat(t, "hello")
		if res.Target != "anthropic/claude-sonnet-4-5" {
			t.Errorf("target %s", res.Target)
		}
		if m.requests(bad) != 1 || m.requests("gpt-4.1-mini") != 0 {
			t.Errorf("quota target %d requests (want 1), sibling on the same key %d (want 0)", m.requests(bad), m.requests("gpt-4.1-mini"))
		}
	})
}

func TestMockInvalidRequestNeverFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const model = "claude-sonnet-4-5+fault=invalid_request"
		m := newMockEngine(t, routeOf("anthropic/"+model, "openai/gpt-4.1"))
		_, err := m.eng.Chat(context.Background(), &resilience.Call{Request: ask("hello")})
		if !errors.Is(err, resilience.ErrRejected) {
			t.Fatalf("err = %v", err)
		}
		var re *resilience.RouteError
		errors.As(err, &re)
		if re.Last() == nil || re.Last().Verdict.Class != classify.InvalidRequest || re.Last().Verdict.RequestID == "" {
			t.Errorf("last = %+v", re.Last())
		}
		if !strings.Contains(err.Error(), "last request id req_") {
			t.Errorf("error line lacks the request id: %s", err)
		}
		if m.requests(model) != 1 || m.requests("gpt-4.1") != 0 {
			t.Errorf("requests: %d, %d", m.requests(model), m.requests("gpt-4.1"))
		}
	})
}

func TestMockStreamFailsOverBeforeFirstToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const model = "claude-sonnet-4-5+fault=529"
		m := newMockEngine(t, routeOf("anthropic/"+model, "gemini/gemini-2.5-flash"))
		sr, err := m.eng.Stream(context.Background(), &resilience.Call{Request: ask("What is the capital of France")})
		if err != nil {
			t.Fatal(err)
		}
		defer sr.Stream.Close()
		if sr.Target != "gemini/gemini-2.5-flash" {
			t.Errorf("target %s", sr.Target)
		}
		got := resilience.Streamed(t, sr.Stream)
		if want := "Mock answer from gemini-2.5-flash: What is the capital of France"; got != want {
			t.Errorf("streamed %q, want %q", got, want)
		}
	})
}

func TestMockStreamMidstreamErrorIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const model = "gpt-4.1+fault=midstream:5"
		// The fallback does not accept a prefill, and its regeneration of the
		// answer names another model than the five tokens the caller has: it
		// cannot continue the answer (TestMockStreamMidstreamRegenerated and
		// TestMockStreamMidstreamContinued have fallbacks that do).
		m := newMockEngine(t, routeOf("openai/"+model, "openai/gpt-4o"))
		sr, err := m.eng.Stream(context.Background(), &resilience.Call{Request: ask("one two three four five six")})
		if err != nil {
			t.Fatal(err)
		}
		defer sr.Stream.Close()
		got := 0
		for {
			c, err := sr.Stream.Recv()
			if err != nil {
				pe := provider.AsError(err)
				if pe == nil || !pe.AfterFirstToken {
					t.Fatalf("mid-stream error %v not marked AfterFirstToken", err)
				}
				break
			}
			if c.Text != "" {
				got++
			}
		}
		if got == 0 {
			t.Error("no tokens before the error")
		}
		if n := m.requests("gpt-4o"); n != 1 {
			t.Errorf("%d requests to gpt-4o, want 1 (the regeneration that diverged)", n)
		}
	})
}

func TestMockStreamMidstreamRegenerated(t *testing.T) {
	// Issue 13 item 1: the fallback does not accept a prefill (the
	// catalogue says nothing of it): the answer is regenerated there, and as
	// it starts with what the caller has, the caller gets the rest of it.
	synctest.Test(t, func(t *testing.T) {
		m := newMockEngine(t, routeOf("openai/gpt-4.1+fault=midstream:2", "openai/gpt-4o"))
		sr, err := m.eng.Stream(context.Background(), &resilience.Call{Request: ask("one two three")})
		if err != nil {
			t.Fatal(err)
		}
		defer sr.Stream.Close()
		got := resilience.Streamed(t, sr.Stream)
		if want := "Mock answer from gpt-4o: one two three"; got != want {
			t.Errorf("streamed %q, want %q", got, want)
		}
		if n := m.requests("gpt-4o"); n != 1 {
			t.Errorf("%d requests to gpt-4o, want 1", n)
		}
	})
}

func TestMockStreamMidstreamContinued(t *testing.T) {
	// A stream that broke after two tokens continues on the fallback, which
	// accepts a prefill (the catalogue says so for Claude): the caller gets
	// the tokens it had, then the continuation (the mock ignores the
	// prefill and answers in full), and one continue event.
	synctest.Test(t, func(t *testing.T) {
		const model = "gpt-4.1+fault=midstream:2"
		m := newMockEngine(t, routeOf("openai/"+model, "anthropic/claude-sonnet-4-5"))
		var evs []resilience.Event
		sr, err := m.eng.Stream(context.Background(), &resilience.Call{Request: ask("one two three"),
			OnEvent: func(e resilience.Event) {
				if e.Kind == resilience.EventContinue {
					evs = append(evs, e)
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		defer sr.Stream.Close()
		got := resilience.Streamed(t, sr.Stream)
		if want := "Mock answerMock answer from claude-sonnet-4-5: one two three"; got != want {
			t.Errorf("streamed %q, want %q", got, want)
		}
		if len(evs) != 1 || evs[0].From != "openai/"+model || evs[0].Target != "anthropic/claude-sonnet-4-5" || evs[0].Verdict == nil {
			t.Errorf("continue events %+v", evs)
		}
		if m.requests("claude-sonnet-4-5") != 1 {
			t.Errorf("%d requests to the fallback, want 1", m.requests("claude-sonnet-4-5"))
		}
	})
}

func TestMockHangFailsOverAfterHeaderTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const model = "gpt-4.1+fault=hang"
		r := routeOf("openai/"+model, "anthropic/claude-sonnet-4-5")
		r.Stream.HeaderTimeout = 200 * time.Millisecond
		m := newMockEngine(t, r)
		res := m.chat(t, "hello")
		if res.Target != "anthropic/claude-sonnet-4-5" || m.requests(model) != 1 {
			t.Errorf("target %s after %d requests to the silent upstream", res.Target, m.requests(model))
		}
	})
}

// TestMockStreamFailureBeforeFirstTokenFallsBack: a stream that says 200 and
// sends only its metadata (Anthropic's message_start, OpenAI's role-only
// delta) before failing or going silent has sent no token: the call moves
// to the next target.
func TestMockStreamFailureBeforeFirstTokenFallsBack(t *testing.T) {
	for _, tc := range []struct {
		name, first, second string
	}{
		{"anthropic error event", "anthropic/claude-sonnet-4-5+fault=midstream:0", "openai/gpt-4.1"},
		{"openai error after role delta", "openai/gpt-4.1+fault=midstream:0", "anthropic/claude-sonnet-4-5"},
		{"anthropic silent after message_start", "anthropic/claude-sonnet-4-5+fault=stuck:0", "openai/gpt-4.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := routeOf(tc.first, tc.second)
				r.Retry.MaxAttempts = 1
				r.Stream.FirstTokenTimeout = 300 * time.Millisecond
				r.Stream.IdleTimeout = time.Second
				m := newMockEngine(t, r)
				sr, err := m.eng.Stream(context.Background(), &resilience.Call{Request: ask("one two three")})
				if err != nil {
					t.Fatal(err)
				}
				defer sr.Stream.Close()
				if sr.Target != strings.Split(tc.second, "+")[0] {
					t.Errorf("answered by %s, want %s", sr.Target, tc.second)
				}
				got := resilience.Streamed(t, sr.Stream)
				if !strings.Contains(got, "one two three") {
					t.Errorf("streamed %q", got)
				}
			})
		})
	}
}

// TestMockCallerDeadlineIsNotIllHealth: callers whose own deadline (50ms)
// is shorter than a healthy model's latency (300ms) end with ErrDeadline
// without opening the model's breaker: a patient caller still gets it.
func TestMockCallerDeadlineIsNotIllHealth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const model = "gpt-4.1+fault=ok@300ms"
		m := newMockEngine(t, routeOf("openai/"+model))
		for range 6 {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			_, err := m.eng.Chat(ctx, &resilience.Call{Request: ask("hello")})
			cancel()
			if !errors.Is(err, resilience.ErrDeadline) {
				t.Fatalf("err = %v, want ErrDeadline", err)
			}
		}
		res, err := m.eng.Chat(context.Background(), &resilience.Call{Request: ask("hello")})
		if err != nil {
			t.Fatalf("patient caller: %v", err)
		}
		if res.Target != "openai/"+model {
			t.Errorf("target %s", res.Target)
		}
	})
}

// TestMockStreamMalformedEventSkipped: one event of invalid JSON in a
// healthy stream is skipped and counted; the caller gets the whole answer,
// streamed or assembled (issue 13 item 2).
func TestMockStreamMalformedEventSkipped(t *testing.T) {
	for _, target := range []string{"openai/gpt-4.1", "anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash"} {
		t.Run(target, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := newMockEngine(t, routeOf(target+"+fault=malformed:2"))
				var malformed []resilience.Event
				sr, err := m.eng.Stream(context.Background(), &resilience.Call{Request: ask("one two three"),
					OnEvent: func(e resilience.Event) {
						if e.Kind == resilience.EventMalformed {
							malformed = append(malformed, e)
						}
					}})
				if err != nil {
					t.Fatal(err)
				}
				got := resilience.Streamed(t, sr.Stream)
				_, model, _ := strings.Cut(target, "/")
				if want := "Mock answer from " + model + ": one two three"; got != want {
					t.Errorf("streamed %q, want %q", got, want)
				}
				if len(malformed) != 1 || malformed[0].Malformed != 1 || malformed[0].Target != target+"+fault=malformed:2" {
					t.Errorf("malformed events %+v, want one counting 1", malformed)
				}
				res := m.chat(t, "one two three")
				if want := "Mock answer from " + model + ": one two three"; res.Response.Text != want || res.Attempts != 1 {
					t.Errorf("chat %q after %d attempts, want %q after 1", res.Response.Text, res.Attempts, want)
				}
			})
		})
	}
}
