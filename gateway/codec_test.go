package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/llmguard/llmguard/internal/sse"
	"github.com/llmguard/llmguard/provider"
)

func ptr[T any](v T) *T { return &v }

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// ignoreRaw leaves Request.Passthrough (the body itself) out of comparisons.
var ignoreRaw = cmpopts.IgnoreFields(provider.Request{}, "Passthrough")

func TestDecodeOpenAI(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *inbound
	}{
		{
			name: "plain",
			body: `{"model":"default","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"max_tokens":20,"temperature":0.5,"stop":"END","stream":true,"stream_options":{"include_usage":true}}`,
			want: &inbound{dialect: "openai", model: "default", includeUsage: true, req: &provider.Request{
				System: "be brief", MaxTokens: 20, Temperature: ptr(0.5), Stop: []string{"END"}, Stream: true, Dialect: "openai",
				Messages: []provider.Message{{Role: "user", Content: []provider.Part{{Type: "text", Text: "hi"}}}}}},
		},
		{
			name: "tools, tool calls, tool results, images and unknown fields",
			body: `{"model":"openai/gpt-4o","messages":[
				{"role":"developer","content":[{"type":"text","text":"sys"}]},
				{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"high"}}]},
				{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get","arguments":"{\"q\":1}"}},{"id":"call_2","type":"function","function":{"name":"put","arguments":""}}]},
				{"role":"tool","tool_call_id":"call_1","content":"one"},
				{"role":"tool","tool_call_id":"call_2","content":[{"type":"text","text":"two"}]}],
				"tools":[{"type":"function","function":{"name":"get","description":"d","parameters":{"type":"object"}}}],
				"tool_choice":{"type":"function","function":{"name":"get"}},
				"response_format":{"type":"json_object"},"seed":7,"max_completion_tokens":99,
				"fallbacks":["anthropic/claude"],"models":"groq/llama"}`,
			want: &inbound{dialect: "openai", model: "openai/gpt-4o", fallbacks: []string{"anthropic/claude", "groq/llama"},
				req: &provider.Request{System: "sys", MaxTokens: 99, Dialect: "openai",
					Messages: []provider.Message{
						{Role: "user", Content: []provider.Part{{Type: "text", Text: "look"},
							{Type: "image", Image: &provider.Image{MediaType: "image/png", Data: "AAAA"}, Extra: map[string]json.RawMessage{"detail": raw(`"high"`)}}}},
						{Role: "assistant", Content: []provider.Part{
							{Type: "tool_call", ToolCall: &provider.ToolCall{ID: "call_1", Name: "get", Arguments: raw(`{"q":1}`)}},
							{Type: "tool_call", ToolCall: &provider.ToolCall{ID: "call_2", Name: "put", Arguments: raw(`{}`)}}}},
						{Role: "tool", Content: []provider.Part{
							{Type: "tool_result", ToolResult: &provider.ToolResult{CallID: "call_1", Content: "one"}},
							{Type: "tool_result", ToolResult: &provider.ToolResult{CallID: "call_2", Content: "two"}}}},
					},
					Tools:          []provider.Tool{{Name: "get", Description: "d", Parameters: raw(`{"type":"object"}`)}},
					ToolChoice:     &provider.ToolChoice{Mode: "tool", Name: "get"},
					ResponseFormat: &provider.ResponseFormat{Type: "json_object"}, Seed: ptr(7)}},
		},
		{
			name: "OpenRouter models alone: the first is the primary",
			body: `{"models":["anthropic/claude","openai/gpt-4o"],"messages":[{"role":"user","content":"hi"}]}`,
			want: &inbound{dialect: "openai", model: "anthropic/claude", fallbacks: []string{"openai/gpt-4o"}, req: &provider.Request{
				Dialect: "openai", Messages: []provider.Message{{Role: "user", Content: []provider.Part{{Type: "text", Text: "hi"}}}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeOpenAI([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(inbound{}), cmpopts.EquateEmpty(), ignoreRaw); d != "" {
				t.Errorf("decodeOpenAI (-want +got):\n%s", d)
			}
		})
	}
}

func TestDecodeAnthropic(t *testing.T) {
	body := `{"model":"anthropic/claude-sonnet-4-5","max_tokens":1024,
		"system":[{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}],
		"thinking":{"type":"enabled","budget_tokens":2000},"top_k":5,"x_unknown":true,
		"metadata":{"user_id":"u1"},"stop_sequences":["STOP"],
		"tools":[{"name":"get","description":"d","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}],
		"tool_choice":{"type":"any","disable_parallel_tool_use":true},
		"messages":[
			{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}},{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"BBBB"}}]},
			{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"tool_use","id":"toolu_1","name":"get","input":{"q":1}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"res"}],"is_error":true},{"type":"text","text":"go on"}]}],
		"fallbacks":[]}`
	got, err := decodeAnthropic([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := &inbound{dialect: "anthropic", model: "anthropic/claude-sonnet-4-5", req: &provider.Request{
		System: "sys", MaxTokens: 1024, Stop: []string{"STOP"}, Metadata: map[string]string{"user_id": "u1"}, Dialect: "anthropic",
		Messages: []provider.Message{
			{Role: "user", Content: []provider.Part{{Type: "text", Text: "hi", Extra: map[string]json.RawMessage{"cache_control": raw(`{"type":"ephemeral"}`)}},
				{Type: "image", Image: &provider.Image{MediaType: "image/jpeg", Data: "BBBB"}}}},
			{Role: "assistant", Content: []provider.Part{
				{Type: "thinking", Extra: map[string]json.RawMessage{"thinking": raw(`"hmm"`), "signature": raw(`"sig"`)}},
				{Type: "tool_call", ToolCall: &provider.ToolCall{ID: "toolu_1", Name: "get", Arguments: raw(`{"q":1}`)}}}},
			{Role: "tool", Content: []provider.Part{{Type: "tool_result", ToolResult: &provider.ToolResult{CallID: "toolu_1", Content: "res", IsError: true}}}},
			{Role: "user", Content: []provider.Part{{Type: "text", Text: "go on"}}},
		},
		Tools:      []provider.Tool{{Name: "get", Description: "d", Parameters: raw(`{"type":"object"}`)}},
		ToolChoice: &provider.ToolChoice{Mode: "required"}, ParallelToolCalls: ptr(false), TopK: ptr(5),
		Lossy: []string{"system[].cache_control", "tools[].cache_control"},
		Extra: map[string]json.RawMessage{
			"system":    raw(`[{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}]`),
			"thinking":  raw(`{"type":"enabled","budget_tokens":2000}`),
			"x_unknown": raw(`true`),
			"tools":     raw(`[{"name":"get","description":"d","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}]`),
		}}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(inbound{}), cmpopts.EquateEmpty(), ignoreRaw); d != "" {
		t.Errorf("decodeAnthropic (-want +got):\n%s", d)
	}
}

// TestDecodeCopies checks that nothing decoded aliases the body, which the
// server recycles.
func TestDecodeCopies(t *testing.T) {
	for _, dec := range []struct {
		name string
		fn   func([]byte) (*inbound, error)
		body string
	}{
		{"openai", decodeOpenAI, `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"},"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"},"strict":true}}]}`},
		{"anthropic", decodeAnthropic, `{"model":"m","system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}],"thinking":{"type":"enabled"},"tool_choice":{"type":"auto","disable_parallel_tool_use":true}}`},
	} {
		t.Run(dec.name, func(t *testing.T) {
			body := []byte(dec.body)
			in, err := dec.fn(body)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(in.req)
			for i := range body {
				body[i] = 'x'
			}
			got, _ := json.Marshal(in.req)
			if !bytes.Equal(got, want) {
				t.Errorf("decoded request changed with the body:\n%s\n%s", want, got)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"not json", `{"model":`, "request body is not valid JSON: unexpected end of JSON input (at byte 9)"},
		{"no model", `{"messages":[{"role":"user","content":"x"}]}`, `missing "model" (a string`},
		{"no messages", `{"model":"m"}`, `missing "messages" (an array of messages)`},
		{"model a number", `{"model":123,"messages":[{"role":"user","content":"x"}]}`, `invalid "model": expected a string, got a number`},
		{"bad max_tokens", `{"model":"m","max_tokens":"many","messages":[{"role":"user","content":"x"}]}`, `invalid "max_tokens": expected an integer, got a string`},
		{"fractional max_tokens", `{"model":"m","max_tokens":1.5,"messages":[{"role":"user","content":"x"}]}`, `invalid "max_tokens": expected an integer, got a number`},
		{"temperature a string", `{"model":"m","temperature":"hot","messages":[{"role":"user","content":"x"}]}`, `invalid "temperature": expected a number, got a string`},
		{"stream a string", `{"model":"m","stream":"yes","messages":[{"role":"user","content":"x"}]}`, `invalid "stream": expected true or false, got a string`},
		{"messages an object", `{"model":"m","messages":{"role":"user"}}`, `invalid "messages": expected an array of messages, got an object`},
		{"message a string", `{"model":"m","messages":["hi"]}`, `invalid "messages[0]": expected an object with role and content, got a string`},
		{"role a number", `{"model":"m","messages":[{"role":1,"content":"x"}]}`, `invalid "messages[0].role": expected a string, got a number`},
		{"content a number", `{"model":"m","messages":[{"role":"user","content":5}]}`, `invalid "messages[0].content": expected a string or an array of content blocks, got a number`},
		{"text a number", `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"user","content":[{"type":"text","text":7}]}]}`, `invalid "messages[1].content[0].text": expected a string, got a number`},
		{"fallbacks a number", `{"model":"m","fallbacks":3,"messages":[{"role":"user","content":"x"}]}`, `invalid "fallbacks": expected a model name or an array of model names, got a number`},
		{"bad unknown field", `{"model":"m","x":tru,"messages":[{"role":"user","content":"x"}]}`, `request body is not valid JSON: invalid character ',' in literal true (expecting 'e') (at byte 21)`},
		{"trailing garbage", `{"model":"m","messages":[{"role":"user","content":"x"}]} {}`, "request body is not valid JSON: invalid character '{' after top-level value"},
		{"array", `[1]`, "request body must be a JSON object, got an array"},
		{"null", `null`, "request body must be a JSON object, got null"},
		{"unterminated", `{"model":"m","messages":[{"role":"user","content":"x"}]`, "request body is not valid JSON: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		for _, dec := range []struct {
			name string
			fn   func([]byte) (*inbound, error)
		}{{"openai", decodeOpenAI}, {"anthropic", decodeAnthropic}} {
			t.Run(tt.name+"/"+dec.name, func(t *testing.T) {
				_, err := dec.fn([]byte(tt.body))
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want containing %q", err, tt.want)
				}
				if strings.Contains(err.Error(), "Go value") || strings.Contains(err.Error(), "float64") {
					t.Errorf("err = %v: names a Go type", err)
				}
			})
		}
	}
}

func TestEncodeResponses(t *testing.T) {
	res := &provider.Response{Model: "m-1", Text: "Hi \"there\"\n", FinishReason: "tool_calls",
		ToolCalls: []provider.ToolCall{{ID: "c1", Name: "get", Arguments: raw(`{"q":"x"}`)}},
		Usage: provider.Usage{InputTokens: 13, OutputTokens: 4, CacheReadTokens: 6, CacheWriteTokens: 4,
			ReasoningTokens: 1, ServiceTier: "standard"}}
	t.Run("openai", func(t *testing.T) {
		var got map[string]any
		if err := json.Unmarshal(appendOpenAIResponse(nil, res, "chatcmpl-1", 42), &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 42.0, "model": "m-1",
			"choices": []any{map[string]any{"index": 0.0, "logprobs": nil, "finish_reason": "tool_calls",
				"message": map[string]any{"role": "assistant", "content": "Hi \"there\"\n", "refusal": nil,
					"tool_calls": []any{map[string]any{"id": "c1", "type": "function",
						"function": map[string]any{"name": "get", "arguments": `{"q":"x"}`}}}}}},
			"usage": map[string]any{"prompt_tokens": 13.0, "completion_tokens": 4.0, "total_tokens": 17.0,
				"prompt_tokens_details": map[string]any{"cached_tokens": 6.0}, "completion_tokens_details": map[string]any{"reasoning_tokens": 1.0}},
			"service_tier": "default"}
		if d := cmp.Diff(want, got); d != "" {
			t.Error(d)
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		var got map[string]any
		if err := json.Unmarshal(appendAnthropicResponse(nil, res, "msg_1"), &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "m-1",
			"content": []any{map[string]any{"type": "text", "text": "Hi \"there\"\n"},
				map[string]any{"type": "tool_use", "id": "c1", "name": "get", "input": map[string]any{"q": "x"}}},
			"stop_reason": "tool_use", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 3.0, "output_tokens": 4.0, "cache_creation_input_tokens": 4.0,
				"cache_read_input_tokens": 6.0, "service_tier": "standard"}}
		if d := cmp.Diff(want, got); d != "" {
			t.Error(d)
		}
	})
}

// event is an SSE event as a test sees it.
type event struct {
	Name string
	Data any
}

func readEvents(t *testing.T, r io.Reader) []event {
	t.Helper()
	var out []event
	rd := sse.NewReader(r)
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var v any = string(ev.Data)
		if string(ev.Data) != "[DONE]" {
			if err := json.Unmarshal(ev.Data, &v); err != nil {
				t.Fatalf("event %q: %v", ev.Data, err)
			}
		}
		out = append(out, event{ev.Name, v})
	}
}

func TestStreamEncoders(t *testing.T) {
	chunks := []provider.Chunk{
		{Text: "Hel"}, {Text: "lo"},
		{ToolCall: &provider.ToolCallDelta{Index: 0, ID: "c1", Name: "get", Arguments: `{"q":`}},
		{ToolCall: &provider.ToolCallDelta{Index: 0, Arguments: `1}`}},
		{FinishReason: "tool_calls"},
	}
	usage := provider.Usage{InputTokens: 15, OutputTokens: 6, CacheReadTokens: 10}
	run := func(enc streamEncoder) {
		if err := enc.start("m-1", "", &provider.Usage{InputTokens: 15, OutputTokens: 1, CacheReadTokens: 10}); err != nil {
			t.Fatal(err)
		}
		for i := range chunks {
			if err := enc.chunk(&chunks[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.finish("tool_calls", usage); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("openai", func(t *testing.T) {
		var buf bytes.Buffer
		run(&oaStream{w: sse.NewWriter(&buf), id: "chatcmpl-1", created: 1, includeUsage: true})
		got := readEvents(t, &buf)
		ch := func(delta map[string]any, finish any) event {
			return event{"", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1.0, "model": "m-1",
				"choices": []any{map[string]any{"index": 0.0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}}
		}
		want := []event{
			ch(map[string]any{"role": "assistant", "content": ""}, nil),
			ch(map[string]any{"content": "Hel"}, nil),
			ch(map[string]any{"content": "lo"}, nil),
			ch(map[string]any{"tool_calls": []any{map[string]any{"index": 0.0, "id": "c1", "type": "function",
				"function": map[string]any{"name": "get", "arguments": `{"q":`}}}}, nil),
			ch(map[string]any{"tool_calls": []any{map[string]any{"index": 0.0, "function": map[string]any{"arguments": `1}`}}}}, nil),
			ch(map[string]any{}, "tool_calls"),
			{"", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1.0, "model": "m-1", "choices": []any{},
				"usage": map[string]any{"prompt_tokens": 15.0, "completion_tokens": 6.0, "total_tokens": 21.0,
					"prompt_tokens_details": map[string]any{"cached_tokens": 10.0}, "completion_tokens_details": map[string]any{"reasoning_tokens": 0.0}}}},
			{"", "[DONE]"},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Error(d)
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		var buf bytes.Buffer
		run(&anStream{w: sse.NewWriter(&buf), id: "msg_1"})
		got := readEvents(t, &buf)
		want := []event{
			{"message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message",
				"role": "assistant", "model": "m-1", "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
				"usage": map[string]any{"input_tokens": 5.0, "output_tokens": 1.0, "cache_creation_input_tokens": 0.0, "cache_read_input_tokens": 10.0}}}},
			{"ping", map[string]any{"type": "ping"}},
			{"content_block_start", map[string]any{"type": "content_block_start", "index": 0.0, "content_block": map[string]any{"type": "text", "text": ""}}},
			{"content_block_delta", map[string]any{"type": "content_block_delta", "index": 0.0, "delta": map[string]any{"type": "text_delta", "text": "Hel"}}},
			{"content_block_delta", map[string]any{"type": "content_block_delta", "index": 0.0, "delta": map[string]any{"type": "text_delta", "text": "lo"}}},
			{"content_block_stop", map[string]any{"type": "content_block_stop", "index": 0.0}},
			{"content_block_start", map[string]any{"type": "content_block_start", "index": 1.0, "content_block": map[string]any{"type": "tool_use", "id": "c1", "name": "get", "input": map[string]any{}}}},
			{"content_block_delta", map[string]any{"type": "content_block_delta", "index": 1.0, "delta": map[string]any{"type": "input_json_delta", "partial_json": `{"q":`}}},
			{"content_block_delta", map[string]any{"type": "content_block_delta", "index": 1.0, "delta": map[string]any{"type": "input_json_delta", "partial_json": `1}`}}},
			{"content_block_stop", map[string]any{"type": "content_block_stop", "index": 1.0}},
			{"message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "tool_use", "stop_sequence": nil},
				"usage": map[string]any{"input_tokens": 5.0, "output_tokens": 6.0, "cache_creation_input_tokens": 0.0, "cache_read_input_tokens": 10.0}}},
			{"message_stop", map[string]any{"type": "message_stop"}},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Error(d)
		}
	})
}

// FuzzDecode checks that no body crashes the decoders and that a body
// encoding/json rejects is rejected.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"model":"m","messages":[{"role":"user","content":"x"}]}`, `{}`, `{"a":[1,{"b":"\"}"}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"data:a;base64,b"}}]}],"tools":[{"type":"function"}]}`,
		`{"model":"m","system":[{"type":"text"}],"messages":[{"role":"user","content":[{"type":"tool_result","content":[{"type":"image"}]}]}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, fn := range []func([]byte) (*inbound, error){decodeOpenAI, decodeAnthropic} {
			in, err := fn(body)
			if err == nil && !json.Valid(body) {
				t.Fatalf("accepted invalid JSON %q", body)
			}
			if err == nil && in.req == nil {
				t.Fatal("nil request without error")
			}
		}
	})
}

// Errors of one dialect's own fields, in the user's terms.
func TestDecodeErrorsPerDialect(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"x"}]`
	tests := []struct {
		dialect, body, want string
	}{
		{"openai", `{"model":"m",` + msgs + `,"stop":5}`, `invalid "stop": expected a string or an array of strings, got a number`},
		{"openai", `{"model":"m",` + msgs + `,"tools":{"a":1}}`, `invalid "tools": expected an array, got an object`},
		{"openai", `{"model":"m",` + msgs + `,"response_format":{"type":7}}`, `invalid "response_format.type": expected a string, got a number`},
		{"anthropic", `{"model":"m",` + msgs + `,"stop_sequences":[1]}`, `invalid "stop_sequences[0]": expected a string, got a number`},
		{"anthropic", `{"model":"m",` + msgs + `,"system":5}`, `invalid "system": expected a string or an array of text blocks, got a number`},
		{"anthropic", `{"model":"m",` + msgs + `,"tools":[{"name":5,"input_schema":{}}]}`, `invalid "tools[0].name": expected a string, got a number`},
		{"anthropic", `{"model":"m",` + msgs + `,"tool_choice":5}`, `invalid "tool_choice": expected an object such as {"type":"auto"}, got a number`},
	}
	for _, tt := range tests {
		dec := decodeOpenAI
		if tt.dialect == "anthropic" {
			dec = decodeAnthropic
		}
		if _, err := dec([]byte(tt.body)); err == nil || err.Error() != tt.want {
			t.Errorf("%s %s: err = %v, want %s", tt.dialect, tt.body, err, tt.want)
		}
	}
}
