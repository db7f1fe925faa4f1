package anthropic_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/classify"
	pt "github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/anthropic"
)

const okBody = `{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
"content":[{"type":"text","text":"Let me check."},{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"get_weather","input":{"city":"Paris"}}],
"stop_reason":"tool_use","stop_sequence":null,
"usage":{"input_tokens":412,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":57}}`

// streamHead is a stream that has started but delivered no content.
const streamHead = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"msg_01S","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
	"event: ping\n" + `data: {"type": "ping"}` + "\n\n"

const streamText = "event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":", Paris."}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n"

const streamTool = "event: content_block_start\n" + `data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T","name":"get_weather","input":{}}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Pa"}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ris\"}"}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":1}` + "\n\n"

const streamDelta = "event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":15}}` + "\n\n"

const streamStop = "event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"

// startUsage is streamHead's usage: a stream cut short still reports it.
var startUsage = provider.Usage{InputTokens: 25, OutputTokens: 1}

func newAdapter(base string) provider.Adapter {
	return anthropic.New(&anthropic.Config{BaseURL: base, APIKey: "sk-ant-api03-Xk9fQ2mVbT7rLw4ZpN8sYc1HdJ6gEaU3oKiR5yBtMx0vWqFlCe", Model: "claude-sonnet-4-5"})
}

func TestEncodeToolConversation(t *testing.T) {
	body, err := anthropic.Encode(pt.ToolConversation(), "claude-x", true)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"claude-x","max_tokens":256,"system":"You are terse.","temperature":0.2,"stop_sequences":["END"],"stream":true,
	"messages":[
	 {"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]},
	 {"role":"assistant","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Paris"}}]},
	 {"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"{\"temp_c\":21}"},{"type":"text","text":"And tomorrow?"}]}],
	"tools":[{"name":"get_weather","description":"Current weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}],
	"tool_choice":{"type":"auto"}}`
	pt.SameJSON(t, want, body)
}

func TestEncode(t *testing.T) {
	user := []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hi",
		Extra: map[string]json.RawMessage{"cache_control": json.RawMessage(`{"type":"ephemeral"}`)}}}}}
	extra := map[string]json.RawMessage{"thinking": json.RawMessage(`{"type":"enabled","budget_tokens":1024}`),
		"model": json.RawMessage(`"not-this"`), "top_k": json.RawMessage(`5`)}
	tests := []struct {
		name string
		req  provider.Request
		want string
	}{
		{"max_tokens defaults to 4096", provider.Request{Messages: user},
			`{"model":"m","max_tokens":4096,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`},
		{"extra passes through in its own dialect", provider.Request{Messages: user, Dialect: "anthropic", Extra: extra},
			`{"model":"m","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":1024},"top_k":5,
			"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}`},
		{"extra dropped from another dialect", provider.Request{Messages: user, Dialect: "openai", Extra: extra},
			`{"model":"m","max_tokens":4096,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`},
		{"metadata user_id, tool choice, images", provider.Request{
			Metadata:   map[string]string{"user_id": "u-1", "other": "dropped"},
			ToolChoice: &provider.ToolChoice{Mode: "tool", Name: "f"},
			Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{
				{Type: provider.PartImage, Image: &provider.Image{MediaType: "image/png", Data: "iVBORw0KGgo="}},
				{Type: provider.PartImage, Image: &provider.Image{URL: "https://example.com/a.jpg"}}}}}},
			`{"model":"m","max_tokens":4096,"metadata":{"user_id":"u-1"},"tool_choice":{"type":"tool","name":"f"},
			"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
			{"type":"image","source":{"type":"url","url":"https://example.com/a.jpg"}}]}]}`},
		{"blocks the canonical form lacks pass through in their own dialect", provider.Request{Dialect: "anthropic",
			Messages: []provider.Message{{Role: provider.RoleAssistant, Content: []provider.Part{
				{Type: "thinking", Extra: map[string]json.RawMessage{"thinking": json.RawMessage(`"hmm"`), "signature": json.RawMessage(`"EqQB"`)}},
				{Type: provider.PartText, Text: "ok"}}}}},
			`{"model":"m","max_tokens":4096,"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"EqQB"},{"type":"text","text":"ok"}]}]}`},
		{"and are left out from another dialect", provider.Request{Dialect: "openai",
			Messages: []provider.Message{
				{Role: provider.RoleUser, Content: []provider.Part{{Type: "input_audio", Extra: map[string]json.RawMessage{"input_audio": json.RawMessage(`{}`)}}}},
				{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hi"}}}}},
			`{"model":"m","max_tokens":4096,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`},
		{"from another dialect temperature is clamped and top_p dropped", provider.Request{Dialect: "openai",
			Temperature: ptr(1.4), TopP: ptr(0.9), Messages: user},
			`{"model":"m","max_tokens":4096,"temperature":1,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`},
		{"in its own dialect both are sent as given", provider.Request{Dialect: "anthropic",
			Temperature: ptr(0.5), TopP: ptr(0.9), Messages: user},
			`{"model":"m","max_tokens":4096,"temperature":0.5,"top_p":0.9,"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}`},
		{"required is any", provider.Request{ToolChoice: &provider.ToolChoice{Mode: "required"}},
			`{"model":"m","max_tokens":4096,"messages":[],"tool_choice":{"type":"any"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := anthropic.Encode(&tc.req, "m", false)
			if err != nil {
				t.Fatal(err)
			}
			pt.SameJSON(t, tc.want, body)
		})
	}
}

func TestChat(t *testing.T) {
	up := pt.NewUpstream(t, pt.Reply(200, okBody, "request-id", "req_011CU"))
	resp, err := newAdapter(up.URL).Chat(context.Background(), pt.ToolConversation())
	if err != nil {
		t.Fatal(err)
	}
	want := &provider.Response{ID: "msg_01XFDUDYJgAACzvnptvVoYEL", Provider: "anthropic", Model: "claude-sonnet-4-5-20250929",
		Text: "Let me check.", FinishReason: provider.FinishToolCalls, RequestID: "req_011CU",
		ToolCalls: []provider.ToolCall{{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}},
		Usage:     provider.Usage{InputTokens: 512, OutputTokens: 57, CacheReadTokens: 100}}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	got := up.Last()
	if got.Path != "/v1/messages" || got.Header.Get("x-api-key") != "sk-ant-api03-Xk9fQ2mVbT7rLw4ZpN8sYc1HdJ6gEaU3oKiR5yBtMx0vWqFlCe" ||
		got.Header.Get("anthropic-version") != "2023-06-01" || got.Header.Get("Authorization") != "" {
		t.Errorf("request path %q headers %v", got.Path, got.Header)
	}
	var sent struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	json.Unmarshal(got.Body, &sent)
	if sent.Model != "m-1" || sent.Stream {
		t.Errorf("sent model %q stream %v", sent.Model, sent.Stream)
	}
}

func TestStream(t *testing.T) {
	tests := []pt.StreamCase{
		{Name: "text and tool call", Stream: streamHead + streamText + streamTool + streamDelta + streamStop,
			Want: pt.Assembled{Text: "Hello, Paris.", ID: "msg_01S", Model: "claude-sonnet-4-5-20250929", FinishReason: provider.FinishToolCalls,
				Usage:     provider.Usage{InputTokens: 25, OutputTokens: 15},
				ToolCalls: []provider.ToolCall{{ID: "toolu_01T", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)}}}},
		{Name: "no message_stop after finish and usage ends cleanly", Stream: streamHead + streamText + streamDelta,
			Want: pt.Assembled{Text: "Hello, Paris.", ID: "msg_01S", Model: "claude-sonnet-4-5-20250929", FinishReason: provider.FinishToolCalls,
				Usage: provider.Usage{InputTokens: 25, OutputTokens: 15}}},
		{Name: "truncated after text", Stream: streamHead + streamText,
			Want: pt.Assembled{Text: "Hello, Paris.", ID: "msg_01S", Model: "claude-sonnet-4-5-20250929", Usage: startUsage}, Class: classify.Network, After: true},
		{Name: "truncated inside an event", Stream: streamHead + streamText + "event: content_block_delta\ndata: {\"type\":\"content_blo",
			Want: pt.Assembled{Text: "Hello, Paris.", ID: "msg_01S", Model: "claude-sonnet-4-5-20250929", Usage: startUsage}, Class: classify.Network, After: true},
		{Name: "overloaded error event after text", Stream: streamHead + streamText + "event: error\n" +
			`data: {"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"}}` + "\n\n",
			Want: pt.Assembled{Text: "Hello, Paris.", ID: "msg_01S", Model: "claude-sonnet-4-5-20250929", Usage: startUsage}, Class: classify.Overloaded, After: true},
		{Name: "overloaded error event first", Stream: "event: error\n" +
			`data: {"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"}}` + "\n\n",
			Want: pt.Assembled{}, Class: classify.Overloaded},
	}
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			up := pt.NewUpstream(t, pt.SSE(tc.Stream, "request-id", "req_S"))
			st, err := newAdapter(up.URL).Stream(context.Background(), pt.ToolConversation())
			if err != nil {
				t.Fatal(err)
			}
			if st.RequestID() != "req_S" {
				t.Errorf("RequestID = %q", st.RequestID())
			}
			tc.Check(t, st)
			if tc.Class == "" {
				var sent struct{ Stream bool }
				json.Unmarshal(up.Last().Body, &sent)
				if !sent.Stream || up.Last().Header.Get("Accept") != "text/event-stream" {
					t.Errorf("request did not ask for a stream")
				}
			}
		})
	}
}

func TestSuite(t *testing.T) {
	pt.Suite{New: newAdapter, StreamHead: streamHead, Errors: errorCases}.Run(t)
}

// errorCases are Anthropic's documented error bodies and headers
// (docs.claude.com/en/api/errors, /work/shared/provider-errors.md).
var errorCases = []pt.ErrorCase{
	{Name: "529 overloaded", Status: 529, Header: []string{"request-id", "req_011CUx"},
		Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CUx"}`, Want: classify.Overloaded},
	{Name: "429 rate limit", Status: 429, Header: []string{"retry-after", "7", "request-id", "req_1"},
		Body: `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 50 input tokens per minute."}}`, Want: classify.RateLimited},
	{Name: "401 bad key", Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, Want: classify.Auth},
	{Name: "403 permission", Status: 403, Body: `{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`, Want: classify.Permission},
	{Name: "404 model", Status: 404, Body: `{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}`, Want: classify.NotFound},
	{Name: "400 low credit", Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`, Want: classify.QuotaExhausted},
	{Name: "400 prompt too long", Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`, Want: classify.ContextLengthExceeded},
	{Name: "400 invalid", Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate between \"user\" and \"assistant\""}}`, Want: classify.InvalidRequest},
	{Name: "413 too large", Status: 413, Body: `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`, Want: classify.RequestTooLarge},
	{Name: "500 api error", Status: 500, Body: `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`, Want: classify.ServerError},
	{Name: "504 timeout", Status: 504, Body: `{"type":"error","error":{"type":"timeout_error","message":"Request timed out"}}`, Want: classify.Timeout},
	{Name: "502 cloudflare html", Status: 502, Header: []string{"Content-Type", "text/html"},
		Body: `<html><head><title>api.anthropic.com | 502: Bad gateway</title></head><body>Bad gateway</body></html>`, Want: classify.ServerError},
}

func ptr(f float64) *float64 { return &f }

// Headers of an Anthropic client reach an Anthropic target only from the
// same dialect and only when allow-listed: anthropic-beta goes on, the
// adapter's key and version are never replaced.
func TestPassHeaders(t *testing.T) {
	hs := map[string]string{"anthropic-beta": "interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14",
		"x-api-key": "sk-ant-client-key", "anthropic-version": "1999-01-01", "authorization": "Bearer x"}
	tests := []struct {
		name     string
		dialect  string
		stream   bool
		headers  map[string]string
		wantBeta string
	}{
		{"anthropic dialect", "anthropic", false, hs, hs["anthropic-beta"]},
		{"anthropic dialect streaming", "anthropic", true, hs, hs["anthropic-beta"]},
		{"openai dialect", "openai", false, hs, ""},
		{"code-built request", "", false, hs, ""},
		{"no headers", "anthropic", false, nil, ""},
		{"header injection refused", "anthropic", false, map[string]string{"anthropic-beta": "a\r\nX-Evil: 1"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := pt.Reply(200, okBody)
			if tt.stream {
				h = pt.SSE(streamHead + streamText + streamDelta + streamStop)
			}
			up := pt.NewUpstream(t, h)
			a := newAdapter(up.URL)
			req := &provider.Request{Dialect: tt.dialect, Headers: tt.headers,
				Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hi"}}}}}
			if tt.stream {
				s, err := a.Stream(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				for {
					if _, err := s.Recv(); err != nil {
						break
					}
				}
				s.Close()
			} else if _, err := a.Chat(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			got := up.Last().Header
			if b := got.Get("Anthropic-Beta"); b != tt.wantBeta {
				t.Errorf("anthropic-beta = %q, want %q", b, tt.wantBeta)
			}
			if k := got.Get("X-Api-Key"); k != "sk-ant-api03-Xk9fQ2mVbT7rLw4ZpN8sYc1HdJ6gEaU3oKiR5yBtMx0vWqFlCe" {
				t.Errorf("x-api-key was replaced (%d chars)", len(k))
			}
			if v := got.Values("Anthropic-Version"); len(v) != 1 || v[0] != anthropic.DefaultVersion {
				t.Errorf("anthropic-version = %q, want only %q", v, anthropic.DefaultVersion)
			}
			if v := got.Get("Authorization"); v != "" {
				t.Errorf("authorization = %q, want none", v)
			}
			if v := got.Get("X-Evil"); v != "" {
				t.Errorf("injected header arrived: %q", v)
			}
		})
	}
}
