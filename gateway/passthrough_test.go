package gateway

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/llmguard/llmguard/mock"
)

func TestPassThroughLossless(t *testing.T) {
	rec := &exchangeLog{next: mock.New(nil)}
	up := httptest.NewServer(rec)
	defer up.Close()
	gw := serveGateway(t, `
default_provider: anthropic # as for Claude Code, which sends bare model ids
providers:
  anthropic: {base_url: `+up.URL+`, api_key: k}
  openai: {base_url: `+up.URL+`/v1, api_key: k}
routes:
  default:
    targets: [anthropic/claude-sonnet-4-5]
`)

	tests := []struct {
		name, path, body string
	}{
		{"anthropic", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":2048,"stream":false,
			"system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}],
			"thinking":{"type":"enabled","budget_tokens":1024},"top_k":40,"metadata":{"user_id":"u-1"},"x_custom":{"a":[1,2]},
			"tools":[{"name":"get_weather","description":"w","input_schema":{"type":"object","properties":{"city":{"type":"string"}}},"cache_control":{"type":"ephemeral"}},
				{"type":"web_search_20250305","name":"web_search","max_uses":3}],
			"tool_choice":{"type":"auto","disable_parallel_tool_use":true},
			"messages":[
				{"role":"user","content":[{"type":"text","text":"Look at this","cache_control":{"type":"ephemeral"}},
					{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
					{"type":"document","source":{"type":"text","media_type":"text/plain","data":"a doc"},"title":"t"}]},
				{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig=="},
					{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny","cache_control":{"type":"ephemeral"}},
					{"type":"text","text":"and now?"}]}]}`},
		{"openai", "/v1/chat/completions", `{"model":"openai/gpt-4o","stream":false,"max_completion_tokens":300,"temperature":0.3,
			"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object"}}},"seed":7,"n":1,
			"logit_bias":{"50256":-100},"user":"u-1","parallel_tool_calls":false,"x_custom":true,
			"tools":[{"type":"function","function":{"name":"get_weather","description":"w","parameters":{"type":"object"},"strict":true}}],
			"tool_choice":"auto",
			"messages":[{"role":"system","content":"You are terse."},
				{"role":"user","content":[{"type":"text","text":"Look"},{"type":"image_url","image_url":{"url":"https://x.test/a.png","detail":"high"}}]},
				{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
				{"role":"tool","tool_call_id":"call_1","content":"sunny"},
				{"role":"user","content":"and now?"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			postOK(t, gw.URL+tt.path, tt.body, "Anthropic-Beta", "interleaved-thinking-2025-05-14")
			var want, got map[string]any
			if err := json.Unmarshal([]byte(tt.body), &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(rec.last(t).req, &got); err != nil {
				t.Fatal(err)
			}
			want["model"] = strings.TrimPrefix(want["model"].(string), "openai/")
			if d := cmp.Diff(asStreamed(want, tt.path == "/v1/chat/completions"), any(got)); d != "" {
				t.Errorf("upstream body differs from the client's (-client +upstream):\n%s", d)
			}
		})
	}
}
