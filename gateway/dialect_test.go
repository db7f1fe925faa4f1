package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/mock"
)

// recConfig routes to one target of each dialect; REC is the recording
// upstream (exchangeLog) in front of the mock.
const recConfig = `
default_provider: anthropic
providers:
  anthropic: {base_url: REC, api_key: k}
  openai: {base_url: REC/v1, api_key: k}
  gemini: {base_url: REC, api_key: k}
routes:
  ant: {targets: [anthropic/claude-sonnet-4-5]}
  oai: {targets: [openai/gpt-4o]}
  gem: {targets: [gemini/gemini-2.5-flash]}
`

// recStack is a gateway whose upstream records each request body, then lets
// the mock (or up, when set) answer.
type recStack struct {
	gw  *pipenet.Server
	rec *exchangeLog
}

func newRecStack(t *testing.T, up http.Handler) *recStack {
	t.Helper()
	if up == nil {
		up = mock.New(nil)
	}
	rec := &exchangeLog{next: up}
	us := httptest.NewServer(rec)
	t.Cleanup(us.Close)
	srv, _ := newGateway(t, strings.ReplaceAll(recConfig, "REC", us.URL), nil, nil, nil)
	gw := pipenet.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	return &recStack{gw: gw, rec: rec}
}

func (s *recStack) post(t *testing.T, path, body string, hdr ...string) reply {
	t.Helper()
	st := &stack{gw: s.gw}
	return st.post(t, path, body, hdr...)
}

// upstream is the last upstream request body, decoded.
func (s *recStack) upstream(t *testing.T) map[string]any {
	t.Helper()
	return decodeJSON(t, s.rec.last(t).req)
}

// jsonOf decodes a JSON text for comparisons.
func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// Claude Code 2.1.x sends {"role":"system"} entries inside messages.
func TestAnthropicSystemMessages(t *testing.T) {
	s := newRecStack(t, nil)
	body := `{"model":"MODEL","max_tokens":64,"system":"top",
		"messages":[{"role":"system","content":"x"},{"role":"user","content":"hi"},
			{"role":"assistant","content":"hello"},
			{"role":"system","content":[{"type":"text","text":"y","cache_control":{"type":"ephemeral"}}],"clear_at":"next_user_message"},
			{"role":"user","content":"again"}]}`
	t.Run("anthropic target: unchanged", func(t *testing.T) {
		r := s.post(t, "/v1/messages", strings.ReplaceAll(body, "MODEL", "ant"))
		if r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		want := asStreamed(jsonOf(t, strings.ReplaceAll(body, "MODEL", "claude-sonnet-4-5")), false)
		if d := cmp.Diff(want, any(s.upstream(t))); d != "" {
			t.Errorf("upstream body differs (-client +upstream):\n%s", d)
		}
	})
	t.Run("openai target: system messages in place", func(t *testing.T) {
		r := s.post(t, "/v1/messages", strings.ReplaceAll(body, "MODEL", "oai"))
		if r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		got := dig(s.upstream(t), "messages")
		want := jsonOf(t, `[{"role":"system","content":"top"},{"role":"system","content":"x"},{"role":"user","content":"hi"},
			{"role":"assistant","content":"hello"},{"role":"system","content":"y"},{"role":"user","content":"again"}]`)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("upstream messages (-want +got):\n%s", d)
		}
		if got := r.header.Get("X-Llmguard-Dropped"); !strings.Contains(got, "clear_at") || !strings.Contains(got, "cache_control") {
			t.Errorf("x-llmguard-dropped = %q, want clear_at and cache_control named", got)
		}
	})
	t.Run("gemini target: merged in order", func(t *testing.T) {
		r := s.post(t, "/v1/messages", strings.ReplaceAll(body, "MODEL", "gem"))
		if r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		up := s.upstream(t)
		if got := dig(up, "systemInstruction", "parts", 0, "text"); got != "top\n\nx\n\ny" {
			t.Errorf("systemInstruction = %v, want top, x, y in order", got)
		}
		if n := len(dig(up, "contents").([]any)); n != 3 {
			t.Errorf("contents: %d turns, want 3 (user, model, user)", n)
		}
	})
}

// A request that stays in its dialect reaches the provider as sent, roles
// and shapes the gateway does not know included: the provider judges its
// own API.
func TestSameDialectUnknownShapes(t *testing.T) {
	s := newRecStack(t, nil)
	tests := []struct{ name, path, body string }{
		{"anthropic", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":64,
			"messages":[{"role":"user","content":"hi"},{"role":"critic","content":[{"type":"novel_block","x":1}],"weight":2}],
			"fallbacks":[{"model":"claude-opus-4-5","max_tokens":10}],"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]}}`},
		{"anthropic default fallbacks", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":64,
			"messages":[{"role":"user","content":"hi"}],"fallbacks":"default"}`},
		{"openai", "/v1/chat/completions", `{"model":"openai/gpt-4o",
			"messages":[{"role":"developer","content":"d"},{"role":"user","content":"hi","name":"ann"},{"role":"critic","content":"c"},
				{"role":"system","content":[{"type":"text","text":"late"}]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.post(t, tt.path, tt.body)
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			want := jsonOf(t, tt.body).(map[string]any)
			want["model"] = strings.TrimPrefix(want["model"].(string), "openai/")
			if d := cmp.Diff(asStreamed(want, tt.path == "/v1/chat/completions"), any(s.upstream(t))); d != "" {
				t.Errorf("upstream body differs (-client +upstream):\n%s", d)
			}
		})
	}
}

// The body of a request that stays in its dialect reaches the provider
// byte for byte, except the model (a route name becomes the target's model)
// and llmguard's own routing fields, and a non-streaming one is asked for
// as a stream (the engine assembles the answer).
func TestSameDialectBytes(t *testing.T) {
	s := newRecStack(t, nil)
	tests := []struct{ name, path, body, want string }{
		{"anthropic", "/v1/messages",
			`{"model":"ant","max_tokens":64,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":[{"type":"text","text":"h\u00e9 \"x\"\n"}]}],"fallbacks":["oai"],"speed":"fast","z":1.50}`,
			`{"model":"claude-sonnet-4-5","max_tokens":64,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":[{"type":"text","text":"h\u00e9 \"x\"\n"}]}],"speed":"fast","z":1.50,"stream":true}`},
		{"anthropic stream", "/v1/messages",
			`{"model":"claude-sonnet-4-5","stream":true,"max_tokens":64,"messages":[{"role":"system","content":"x"},{"role":"user","content":"hi"}]}`,
			`{"model":"claude-sonnet-4-5","stream":true,"max_tokens":64,"messages":[{"role":"system","content":"x"},{"role":"user","content":"hi"}]}`},
		{"openai", "/v1/chat/completions",
			`{"model":"oai","messages":[{"role":"developer","content":"d"},{"role":"user","content":"hi"}],"max_completion_tokens":20,"seed":7,"response_format":{"type":"json_object"},"models":["ant"]}`,
			`{"model":"gpt-4o","messages":[{"role":"developer","content":"d"},{"role":"user","content":"hi"}],"max_completion_tokens":20,"seed":7,"response_format":{"type":"json_object"},"stream":true,"stream_options":{"include_usage":true}}`},
		{"openai stream", "/v1/chat/completions",
			`{"model":"openai/gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`,
			`{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.post(t, tt.path, tt.body)
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			last := s.rec.last(t)
			got, path := string(last.req), last.path
			if !strings.HasSuffix(tt.path, path) {
				t.Errorf("upstream path %s, want %s", path, tt.path)
			}
			if got != tt.want {
				t.Errorf("upstream body\n got %s\nwant %s", got, tt.want)
			}
			if d := r.header.Get("X-Llmguard-Dropped"); d != "" {
				t.Errorf("x-llmguard-dropped = %q on a same-dialect request", d)
			}
		})
	}
}

// diffAny is cmp.Diff for decoded JSON values.
func diffAny(want, got any) string { return cmp.Diff(want, got) }
