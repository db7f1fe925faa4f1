package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect runs a server for cfg over the SDK's in-memory transport and
// returns a connected client session.
func connect(t *testing.T, cfg *Config, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	if cfg == nil {
		cfg = &Config{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := New(cfg).Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

// callOK calls the tool name with args, asking for progress notifications
// under token unless it is "", and fails the test unless the tool succeeded.
func callOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, token string) *mcp.CallToolResult {
	t.Helper()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if token != "" {
		params.SetProgressToken(token)
	}
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s failed: %s", name, text(t, res))
	}
	return res
}

// text returns the result's only text content.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result has %d content blocks, want 1: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text
}

// errorLine checks that res is an isError result of exactly one line and returns it.
func errorLine(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if !res.IsError {
		t.Fatalf("result is not an error: %+v", res)
	}
	line := text(t, res)
	if line == "" || strings.ContainsAny(line, "\r\n") {
		t.Fatalf("error is not exactly one line: %q", line)
	}
	if res.StructuredContent != nil {
		t.Errorf("error result carries structured content %v", res.StructuredContent)
	}
	return line
}

func wantAll(t *testing.T, got string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(got, s) {
			t.Errorf("%q lacks %q", got, s)
		}
	}
}

func TestListTools(t *testing.T) {
	cs := connect(t, nil, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	required := map[string][]string{}
	for _, tool := range res.Tools {
		var schema struct {
			Required []string `json:"required"`
		}
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		required[tool.Name] = append([]string{}, schema.Required...)
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
	}
	want := map[string][]string{
		"summarize":       {"text"},
		"batch_summarize": {},
		"ask":             {"prompt"},
		"chat":            {"messages"},
		"decode_error":    {},
		"llm_status":      {},
	}
	if diff := cmp.Diff(want, required); diff != "" {
		t.Errorf("tools and required inputs (-want +got):\n%s", diff)
	}
}

func TestNoProviderKey(t *testing.T) {
	cs := connect(t, &Config{}, nil)
	for _, tc := range []struct {
		tool string
		args any
	}{
		{"summarize", map[string]any{"text": "a long text"}},
		{"ask", map[string]any{"prompt": "hi"}},
		{"chat", map[string]any{"messages": []map[string]string{{"role": "user", "content": "hi"}}}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			line := errorLine(t, callTool(t, cs, tc.tool, tc.args))
			wantAll(t, line, "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "shell profile", "claude mcp add llmguard -e ANTHROPIC_API_KEY=", `"env"`)
		})
	}
	t.Run("llm_status still answers", func(t *testing.T) {
		res := callTool(t, cs, "llm_status", map[string]any{})
		if res.IsError {
			t.Fatalf("llm_status failed: %v", text(t, res))
		}
		wantAll(t, text(t, res), "no targets yet", "recent failures:", "ask: no LLM provider key")
	})
}

func TestConfigErrorLine(t *testing.T) {
	cs := connect(t, &Config{ConfigError: "providers.anthropic.api_key is empty: set ANTHROPIC_API_KEY"}, nil)
	line := errorLine(t, callTool(t, cs, "ask", map[string]any{"prompt": "hi"}))
	wantAll(t, line, "llmguard is not configured: providers.anthropic.api_key is empty: set ANTHROPIC_API_KEY", "shell profile")
}

// panicEngine panics on every call: toolHandler must turn that into one line.
type panicEngine struct{}

func (panicEngine) Chat(context.Context, *resilience.Call) (*resilience.Result, error) {
	panic("boom\nsecond line")
}
func (panicEngine) Status() []resilience.TargetStatus { panic("status boom") }

func TestPanicBecomesOneLine(t *testing.T) {
	cs := connect(t, &Config{Engine: panicEngine{}}, nil)
	for _, tool := range []string{"ask", "llm_status"} {
		t.Run(tool, func(t *testing.T) {
			args := map[string]any{}
			if tool == "ask" {
				args["prompt"] = "hi"
			}
			line := errorLine(t, callTool(t, cs, tool, args))
			wantAll(t, line, "llmguard internal error in ", "boom")
			if strings.Contains(line, "goroutine") || strings.Contains(line, ".go:") {
				t.Errorf("line carries a stack trace: %q", line)
			}
		})
	}
	// The session survives a panic.
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("session broken after panic: %v", err)
	}
}

func TestInvalidArguments(t *testing.T) {
	cs := connect(t, &Config{Engine: panicEngine{}}, nil)
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"summarize", map[string]any{"text": "  "}, "text is empty"},
		{"ask", map[string]any{"prompt": ""}, "prompt is empty"},
		{"chat", map[string]any{"messages": []map[string]string{{"role": "robot", "content": "x"}}}, `messages[0].role is "robot"`},
		{"chat", map[string]any{"messages": []map[string]string{}}, "no user or assistant turn"},
	} {
		t.Run(tc.tool+"/"+tc.want, func(t *testing.T) {
			wantAll(t, errorLine(t, callTool(t, cs, tc.tool, tc.args)), tc.want)
		})
	}
}

func TestDescribe(t *testing.T) {
	now := time.Date(2026, 11, 30, 14, 1, 0, 0, time.UTC)
	s := newServer(&Config{Now: func() time.Time { return now }})
	pe := func(prov, model string, v classify.Verdict) *provider.Error {
		return &provider.Error{Provider: prov, Model: model, Verdict: v}
	}
	auth := pe("anthropic", "claude-x", classify.Verdict{Status: 401, Class: classify.Auth, Scope: classify.ScopeKey,
		ProviderType: "authentication_error", RequestID: "req_1",
		Message: "401 authentication_error: invalid x-api-key (request-id req_1)"})
	quota := pe("openai", "gpt-x", classify.Verdict{Status: 429, Class: classify.QuotaExhausted, Scope: classify.ScopeKey,
		ProviderType: "insufficient_quota", RequestID: "req_2", Message: "429 insufficient_quota: You exceeded your current quota"})
	over := pe("anthropic", "claude-x", classify.Verdict{Status: 529, Class: classify.Overloaded, Retryable: true, Wait: 70 * time.Second,
		ProviderType: "overloaded_error", Message: "529 overloaded_error: Overloaded (request-id req_3)"})
	skip := samplingError("the MCP client does not offer sampling", nil)
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"auth", fmt.Errorf("route default: %w", errors.Join(resilience.ErrExhausted, auth)),
			[]string{"anthropic/claude-x: 401 authentication_error: invalid x-api-key (request-id req_1) after 1 attempt; fix the key in the client's env block"}},
		{"quota adds request id", errors.Join(resilience.ErrExhausted, quota),
			[]string{"openai/gpt-x: 429 insufficient_quota: You exceeded your current quota (request-id req_2) after 1 attempt; add credits"}},
		{"overloaded says when", errors.Join(resilience.ErrExhausted, over, over),
			[]string{"529 overloaded_error", "after 2 attempts", "retry after 14:02:10Z"}},
		{"sampling skip does not hide the provider", errors.Join(resilience.ErrExhausted, auth, skip),
			[]string{"401 authentication_error", "after 2 attempts"}},
		{"deadline", errors.Join(resilience.ErrDeadline, over),
			[]string{"no answer within this tool's 50s deadline", "529 overloaded_error", "retry after 14:02:10Z"}},
		{"unknown route", fmt.Errorf("%w: %q", resilience.ErrUnknownRoute, "fast"), []string{`unknown route: "fast"`, "provider/model"}},
		{"no target", resilience.ErrNoTarget, []string{"no target available", "ANTHROPIC_API_KEY", "llm_status"}},
		{"other", errors.New("weird\nfailure"), []string{"llm call failed: weird failure"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := s.describe(context.Background(), tc.err).Error()
			if strings.ContainsAny(got, "\n\r") {
				t.Errorf("not one line: %q", got)
			}
			wantAll(t, got, tc.want...)
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		wantAll(t, s.describe(ctx, context.Canceled).Error(), "cancelled by the client")
	})
}

func TestIdempotencyKey(t *testing.T) {
	key := func(tool, args string) string {
		t.Helper()
		k, err := idempotencyKey(tool, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tool, Arguments: json.RawMessage(args)}})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	a := key("ask", `{"prompt":"hi","max_tokens":10}`)
	for _, tc := range []struct {
		name, tool, args string
		same             bool
	}{
		{"reordered and spaced", "ask", "{ \"max_tokens\": 10,\n \"prompt\": \"hi\" }", true},
		{"other value", "ask", `{"prompt":"hi","max_tokens":11}`, false},
		{"number spelled otherwise", "ask", `{"prompt":"hi","max_tokens":10.0}`, false},
		{"other tool", "summarize", `{"prompt":"hi","max_tokens":10}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := key(tc.tool, tc.args) == a; got != tc.same {
				t.Errorf("same key = %v, want %v", got, tc.same)
			}
		})
	}
	if !strings.HasPrefix(a, "mcp:") || len(a) != 4+64 {
		t.Errorf("key %q is not mcp:<sha256 hex>", a)
	}
}

func TestProgressMessage(t *testing.T) {
	v := &classify.Verdict{Status: 529, Class: classify.Overloaded, ProviderType: "overloaded_error",
		Message: "529 overloaded_error: Overloaded (request-id req_1)"}
	for _, tc := range []struct {
		ev   resilience.Event
		want string
	}{
		{resilience.Event{Kind: resilience.EventRetry, Target: "anthropic/claude-x", Attempt: 2, MaxAttempts: 5, Verdict: v, Wait: 3210 * time.Millisecond},
			"anthropic/claude-x attempt 2/5: 529 overloaded_error; retrying in 3.2s"},
		{resilience.Event{Kind: resilience.EventFallback, From: "anthropic/claude-x", Target: "openai/gpt-x", Verdict: v},
			"anthropic/claude-x failed (529 overloaded_error: Overloaded (request-id req_1)); falling back to openai/gpt-x"},
		{resilience.Event{Kind: resilience.EventFallback, From: "anthropic/claude-x", Target: "openai/gpt-x", Reason: "hedge: no answer within 2s"},
			"anthropic/claude-x: hedge: no answer within 2s; also trying openai/gpt-x"},
		{resilience.Event{Kind: resilience.EventSkip, Target: "openai/gpt-x", Reason: "breaker open"}, "skipping openai/gpt-x: breaker open"},
		{resilience.Event{Kind: resilience.EventPace, Target: "openai/gpt-x", Wait: 2140 * time.Millisecond},
			"openai/gpt-x: waiting 2.1s for a turn under its announced rate limit"},
		{resilience.Event{Kind: resilience.EventHedgeWon, From: "anthropic/claude-x", Target: "openai/gpt-x"},
			"openai/gpt-x answered before anthropic/claude-x"},
		{resilience.Event{Kind: resilience.EventAttempt, Target: "openai/gpt-x"}, ""},
	} {
		t.Run(string(tc.ev.Kind)+tc.ev.Reason, func(t *testing.T) {
			if got := progressMessage(tc.ev); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
