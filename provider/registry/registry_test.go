package registry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	pt "github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/registry"
)

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		key  string
		p    *registry.Settings
		want []string // substrings of the one-line error
	}{
		{"unknown type", "mine", &registry.Settings{Type: "opnai", APIKey: "k"}, []string{"providers.mine.type", `"opnai"`, "openai"}},
		{"unknown name without type", "claude", &registry.Settings{APIKey: "k"}, []string{"providers.claude", `"claude"`}},
		{"sim is not an adapter", "sim", &registry.Settings{}, []string{"providers.sim", "simulated provider", "no provider key is set", "ANTHROPIC_API_KEY"}},
		{"missing anthropic key", "anthropic", &registry.Settings{}, []string{"providers.anthropic.api_key", "ANTHROPIC_API_KEY", "MCP clients", "shell profile"}},
		{"missing gemini key", "gemini", nil, []string{"GEMINI_API_KEY or GOOGLE_API_KEY"}},
		{"missing key of a custom name", "work", &registry.Settings{Type: "groq"}, []string{"providers.work.api_key", "GROQ_API_KEY"}},
		{"azure needs its endpoint", "azure", &registry.Settings{APIKey: "k"}, []string{"providers.azure.base_url", "AZURE_OPENAI_ENDPOINT"}},
		{"openai-compatible needs a base URL", "local", &registry.Settings{Type: "openai-compatible"}, []string{"providers.local.base_url"}},
		{"scheme", "openai", &registry.Settings{APIKey: "k", BaseURL: "ftp://api.openai.com/v1"}, []string{"providers.openai.base_url", "http://"}},
		{"no host", "openai", &registry.Settings{APIKey: "k", BaseURL: "https:///v1"}, []string{"providers.openai.base_url", "no host"}},
		{"not a URL", "openai", &registry.Settings{APIKey: "k", BaseURL: "api.openai.com/v1"}, []string{"providers.openai.base_url"}},
		{"bad escape", "openai", &registry.Settings{APIKey: "k", BaseURL: "http://h/%zz"}, []string{"providers.openai.base_url"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := registry.New(tc.key, tc.p, nil)
			if err == nil {
				t.Fatalf("New = %v, want an error", a)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error has several lines: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
}

// TestNew builds every known provider type and checks where its adapter
// sends a request and how it authenticates.
func TestNew(t *testing.T) {
	up := pt.NewUpstream(t, pt.Reply(200, `{"id":"x","model":"m","choices":[{"index":0,"message":{"content":"ok"},"finish_reason":"stop"}],
		"type":"message","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",
		"candidates":[{"content":{"parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`))
	tests := []struct {
		name     string
		p        registry.Settings
		wantPath string
		wantAuth [2]string
	}{
		{"anthropic", registry.Settings{APIKey: "sk-ant-1", BaseURL: up.URL}, "/v1/messages", [2]string{"x-api-key", "sk-ant-1"}},
		{"openai", registry.Settings{APIKey: "sk-1", BaseURL: up.URL + "/v1"}, "/v1/chat/completions", [2]string{"Authorization", "Bearer sk-1"}},
		{"gemini", registry.Settings{APIKey: "AIza1", BaseURL: up.URL}, "/v1beta/models/gemini-2.5-flash:generateContent", [2]string{"x-goog-api-key", "AIza1"}},
		{"azure", registry.Settings{APIKey: "az", BaseURL: up.URL, Model: "dep1"}, "/openai/deployments/dep1/chat/completions", [2]string{"api-key", "az"}},
		{"deepseek", registry.Settings{APIKey: "sk-d", BaseURL: up.URL + "/v1"}, "/v1/chat/completions", [2]string{"Authorization", "Bearer sk-d"}},
		{"groq", registry.Settings{APIKey: "gsk_1", BaseURL: up.URL + "/openai/v1"}, "/openai/v1/chat/completions", [2]string{"Authorization", "Bearer gsk_1"}},
		{"local", registry.Settings{Type: "openai-compatible", BaseURL: up.URL + "/v1", APIKey: "none", Model: "llama"}, "/v1/chat/completions", [2]string{"Authorization", ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := registry.New(tc.name, &tc.p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a.Name() != tc.name {
				t.Errorf("Name = %q", a.Name())
			}
			req := &provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hi"}}}}}
			resp, err := a.Chat(context.Background(), req)
			if err != nil || resp.Text != "ok" {
				t.Fatalf("Chat = %+v, %v", resp, err)
			}
			got := up.Last()
			if got.Path != tc.wantPath || got.Header.Get(tc.wantAuth[0]) != tc.wantAuth[1] {
				t.Errorf("sent %s with %s=%q; want %s with %q", got.Path, tc.wantAuth[0], got.Header.Get(tc.wantAuth[0]), tc.wantPath, tc.wantAuth[1])
			}
		})
	}
}

func TestBuild(t *testing.T) {
	settings := map[string]*registry.Settings{
		"anthropic": {APIKey: "k"}, "fast": {Type: "groq", APIKey: "k"}, "gemini": {APIKey: "k"},
	}
	m, err := registry.Build(settings, provider.NewHTTPClient(nil))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n, a := range m {
		if a.Name() != n {
			t.Errorf("adapter %q named %q", n, a.Name())
		}
		names = append(names, n)
	}
	if len(names) != 3 {
		t.Errorf("adapters = %v", names)
	}
	settings["broken"] = &registry.Settings{Type: "deepseek"}
	if _, err := registry.Build(settings, nil); err == nil || !strings.Contains(err.Error(), "DEEPSEEK_API_KEY") {
		t.Errorf("Build with a keyless provider: %v", err)
	}
}

// TestToolFallback runs an agent's tool round trip across dialects: OpenAI
// asks for a tool call, the agent runs it, then OpenAI fails and the same
// conversation goes to Anthropic and Gemini, which must receive the call
// and its result in their own shapes.
func TestToolFallback(t *testing.T) {
	oa := pt.NewUpstream(t, pt.Reply(200, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_Xy","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":5}}`))
	an := pt.NewUpstream(t, pt.Reply(200, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Oslo: 3°C"}],"stop_reason":"end_turn","usage":{"input_tokens":9,"output_tokens":4}}`))
	ge := pt.NewUpstream(t, pt.Reply(200, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Oslo: 3°C"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":4}}`))
	mk := func(name, base string) provider.Adapter {
		a, err := registry.New(name, &registry.Settings{APIKey: "k", BaseURL: base}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	req := &provider.Request{
		Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "Weather in Oslo?"}}}},
		Tools:    []provider.Tool{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
	}
	first, err := mk("openai", oa.URL+"/v1").Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.ToolCalls) != 1 || first.FinishReason != provider.FinishToolCalls {
		t.Fatalf("first answer %+v", first)
	}
	call := first.ToolCalls[0]
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartToolCall, ToolCall: &call}}},
		provider.Message{Role: provider.RoleTool, Content: []provider.Part{{Type: provider.PartToolResult,
			ToolResult: &provider.ToolResult{CallID: call.ID, Content: "3°C"}}}})

	for _, tc := range []struct {
		name, base string
		up         *pt.Upstream
		want       string // the last two turns as sent
		last       func(body map[string]any) any
	}{
		{"anthropic", an.URL, an, `[{"role":"assistant","content":[{"type":"tool_use","id":"call_Xy","name":"get_weather","input":{"city":"Oslo"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_Xy","content":"3°C"}]}]`,
			func(b map[string]any) any { m := b["messages"].([]any); return m[len(m)-2:] }},
		{"gemini", ge.URL, ge, `[{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Oslo"}}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"result":"3°C"}}}]}]`,
			func(b map[string]any) any { m := b["contents"].([]any); return m[len(m)-2:] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := mk(tc.name, tc.base).Chat(context.Background(), req)
			if err != nil || resp.Text != "Oslo: 3°C" {
				t.Fatalf("Chat = %+v, %v", resp, err)
			}
			var body map[string]any
			if err := json.Unmarshal(tc.up.Last().Body, &body); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(pt.JSON(t, []byte(tc.want)), tc.last(body)); diff != "" {
				t.Errorf("tool turns (-want +got):\n%s", diff)
			}
		})
	}
}
