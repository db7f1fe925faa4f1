package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmguard/llmguard/provider"
)

// fullJSON is req's Full decoding and the whole decoding want, as JSON
// without what only a relay keeps (Deferred, Passthrough): the two are
// equal when Full decodes what the whole decoder does. An error from Full
// fails the test.
func fullJSON(t *testing.T, req, want *provider.Request) (string, string) {
	t.Helper()
	full, err := req.Full()
	if err != nil {
		t.Fatal(err)
	}
	full.Deferred, full.Passthrough, want.Passthrough = nil, nil, nil
	g, _ := json.Marshal(full)
	w, _ := json.Marshal(want)
	return string(g), string(w)
}

// TestDecodeChatDefers: decodeChat refuses every body the whole decoder
// refuses with the same message, or, for a fault past what routing reads
// (inside a message), accepts it and leaves the fault to the request's
// Full; what it does decode equals the whole decoder's, and Full gives the
// whole decoding.
func TestDecodeChatDefers(t *testing.T) {
	deferred := map[string]bool{"message a string": true, "role a number": true, "content a number": true, "text a number": true}
	tests := []struct{ name, body string }{
		{"not json", `{"model":`},
		{"no model", `{"messages":[{"role":"user","content":"x"}]}`},
		{"no messages", `{"model":"m"}`},
		{"empty messages", `{"model":"m","messages":[]}`},
		{"model a number", `{"model":123,"messages":[{"role":"user","content":"x"}]}`},
		{"bad max_tokens", `{"model":"m","max_tokens":"many","messages":[{"role":"user","content":"x"}]}`},
		{"stream a string", `{"model":"m","stream":"yes","messages":[{"role":"user","content":"x"}]}`},
		{"messages an object", `{"model":"m","messages":{"role":"user"}}`},
		{"message a string", `{"model":"m","messages":["hi"]}`},
		{"role a number", `{"model":"m","messages":[{"role":1,"content":"x"}]}`},
		{"content a number", `{"model":"m","messages":[{"role":"user","content":5}]}`},
		{"text a number", `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"user","content":[{"type":"text","text":7}]}]}`},
		{"fallbacks a number", `{"model":"m","fallbacks":3,"messages":[{"role":"user","content":"x"}]}`},
		{"bad unknown field", `{"model":"m","x":tru,"messages":[{"role":"user","content":"x"}]}`},
		{"trailing garbage", `{"model":"m","messages":[{"role":"user","content":"x"}]} {}`},
		{"array", `[1]`},
		{"null", `null`},
		{"unterminated", `{"model":"m","messages":[{"role":"user","content":"x"}]`},
	}
	for _, tt := range tests {
		for _, dialect := range []string{DialectOpenAI, DialectAnthropic} {
			t.Run(tt.name+"/"+dialect, func(t *testing.T) {
				full := decodeOpenAI
				if dialect == DialectAnthropic {
					full = decodeAnthropic
				}
				_, werr := full([]byte(tt.body))
				if werr == nil {
					t.Fatal("the whole decoder took it")
				}
				in, err := decodeChat(dialect, []byte(tt.body), nil)
				if !deferred[tt.name] {
					if err == nil || err.Error() != werr.Error() {
						t.Fatalf("decodeChat: %v, want %v", err, werr)
					}
					return
				}
				if err != nil {
					t.Fatalf("decodeChat: %v, want the fault deferred", err)
				}
				if _, err := in.req.Full(); err == nil || err.Error() != werr.Error() {
					t.Errorf("Full: %v, want %v", err, werr)
				}
			})
		}
	}
}

// TestDecodeChatFull: a relay decoding's Full is the whole decoding, and
// what routing reads is decoded at once.
func TestDecodeChatFull(t *testing.T) {
	bodies := map[string]string{
		DialectOpenAI: `{"model":"oai","stream":true,"max_completion_tokens":50,"metadata":{"a":"b"},"temperature":0.5,` +
			`"stream_options":{"include_usage":true},"fallbacks":["ant"],"seed":3,"user":"u","stop":"x","thinking":{"x":1},` +
			`"messages":[{"role":"system","content":"be \"brief\""},{"role":"user","content":[{"type":"text","text":"hi"}]}],` +
			`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"auto"}`,
		DialectAnthropic: `{"model":"ant","stream":true,"max_tokens":50,"metadata":{"user_id":"b"},"top_k":3,` +
			`"system":[{"type":"text","text":"be brief","cache_control":{"type":"ephemeral"}}],"stop_sequences":["x"],"thinking":{"x":1},` +
			`"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"tools":[{"name":"f","input_schema":{"type":"object"}}]}`,
	}
	for dialect, body := range bodies {
		t.Run(dialect, func(t *testing.T) {
			want, err := decodeChatWhole(dialect, body)
			if err != nil {
				t.Fatal(err)
			}
			in, err := decodeChat(dialect, []byte(body), nil)
			if err != nil {
				t.Fatal(err)
			}
			if in.model != want.model || strings.Join(in.fallbacks, ",") != strings.Join(want.fallbacks, ",") ||
				in.includeUsage != want.includeUsage || in.req.Stream != want.req.Stream || in.req.MaxTokens != want.req.MaxTokens ||
				len(in.req.Metadata) != len(want.req.Metadata) || in.req.Messages != nil {
				t.Errorf("relay decoding %+v %+v, want %+v %+v, messages undecoded", in, in.req, want, want.req)
			}
			// The OpenAI body has fallbacks, so its Passthrough is a copy
			// without them, whose fields the adapter finds itself.
			if f := in.req.Passthrough.Fields; (dialect == DialectOpenAI) != (f == nil) || f != nil && f[0].Key != "model" {
				t.Errorf("Passthrough.Fields = %v", f)
			}
			if g, w := fullJSON(t, in.req, want.req); g != w {
				t.Errorf("Full:\n%s\nwant\n%s", g, w)
			}
		})
	}
}

func decodeChatWhole(dialect, body string) (*inbound, error) {
	if dialect == DialectAnthropic {
		return decodeAnthropic([]byte(body))
	}
	return decodeOpenAI([]byte(body))
}

// TestRelayMalformedMessage: a body relayed in its dialect with a message
// of the wrong type gets the upstream's 400, relayed as it is; on a route
// with a target of another dialect, it gets the gateway's own 400 as
// before. A body that routing cannot read gets the gateway's 400 on both.
func TestRelayMalformedMessage(t *testing.T) {
	var attempts atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		if strings.HasSuffix(r.URL.Path, "/messages") {
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content: Input should be a valid list"}}`)
			return
		}
		io.WriteString(w, `{"error":{"message":"Invalid type for 'messages[0].content': expected one of a string or array of objects, but got an integer instead.","type":"invalid_request_error","param":"messages[0].content","code":"invalid_type"}}`)
	}))
	defer up.Close()
	srv, _ := newGateway(t, "providers:\n"+
		"  openai: {base_url: "+up.URL+"/v1, api_key: k}\n"+
		"  anthropic: {base_url: "+up.URL+", api_key: k}\n"+
		"  gemini: {base_url: "+up.URL+", api_key: k}\n"+
		"routes:\n"+
		"  oai:\n    targets: [openai/gpt-4o]\n"+
		"  ant:\n    targets: [anthropic/claude-sonnet-4-5]\n"+
		"  mixed:\n    targets: [openai/gpt-4o, anthropic/claude-sonnet-4-5]\n"+
		"  gem:\n    targets: [gemini/gemini-2.5-flash]\n", nil, nil, nil)
	gw := httptest.NewServer(srv.Handler())
	defer gw.Close()
	for _, tt := range []struct {
		name, path, body string
		want             string // in the answer's body
		upstream         bool   // the upstream's answer
	}{
		{"openai relayed", "/v1/chat/completions", `{"model":"oai","messages":[{"role":"user","content":5}]}`,
			"Invalid type for 'messages[0].content'", true},
		{"anthropic relayed", "/v1/messages", `{"model":"ant","max_tokens":9,"messages":[{"role":"user","content":5}]}`,
			"messages.0.content: Input should be a valid list", true},
		{"openai translated", "/v1/chat/completions", `{"model":"mixed","messages":[{"role":"user","content":5}]}`,
			`invalid \"messages[0].content\": expected a string or an array of content blocks, got a number`, false},
		{"anthropic translated", "/v1/messages", `{"model":"gem","max_tokens":9,"messages":[{"role":"user","content":5}]}`,
			`invalid \"messages[0].content\": expected a string or an array of content blocks, got a number`, false},
		{"openai relayed, fallback translated", "/v1/chat/completions", `{"model":"oai","fallbacks":["ant"],"messages":[{"role":"user","content":5}]}`,
			`invalid \"messages[0].content\"`, false},
		{"openai relayed, model a number", "/v1/chat/completions", `{"model":7,"messages":[{"role":"user","content":"x"}]}`,
			`invalid \"model\": expected a string, got a number`, false},
		{"anthropic relayed, not JSON", "/v1/messages", `{"model":"ant","messages":[{"role":"user","content":"x"}]`,
			"request body is not valid JSON", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := attempts.Load()
			resp, err := http.Post(gw.URL+tt.path, "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			sent := attempts.Load() - before
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), tt.want) {
				t.Errorf("%d %s, want 400 with %s", resp.StatusCode, b, tt.want)
			}
			if tt.upstream != (sent == 1) || sent > 1 {
				t.Errorf("%d upstream attempts, want the upstream asked: %v", sent, tt.upstream)
			}
		})
	}
}

// TestFullDeferredOnce: every copy of a deferred request shares one
// decoding, and a copy keeps its own fields.
func TestFullDeferredOnce(t *testing.T) {
	in, err := decodeChat(DialectOpenAI, []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := *in.req
	c.Model = "other"
	a, _ := in.req.Full()
	b, _ := c.Full()
	if len(a.Messages) != 1 || &a.Messages[0] != &b.Messages[0] || b.Model != "other" || a.Model != "" || a.Deferred != nil {
		t.Errorf("Full of the request and of a copy: %+v, %+v", a, b)
	}
	plain := &provider.Request{Model: "m"}
	if f, err := plain.Full(); f != plain || err != nil {
		t.Errorf("Full of a request with nothing deferred = %p, %v; want itself", f, err)
	}
}
