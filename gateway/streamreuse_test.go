package gateway

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmguard/llmguard/provider"
)

// TestStreamReusesUpstreamConnection: an upstream that flushes each event
// on its own, as model servers do, sends its terminator after the usage
// chunk that completes the answer. Streams one after the other reuse one
// upstream connection, for OpenAI's [DONE] and Anthropic's message_stop
// alike: the gateway reads the terminator (the client's answer does not
// wait for it) instead of closing the answer early, which tore the
// connection down and made every stream dial a new one.
func TestStreamReusesUpstreamConnection(t *testing.T) {
	oa := []string{
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`,
		`[DONE]`,
	}
	an := []string{
		"event: message_start\ndata: " + `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}`,
		"event: content_block_start\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"event: content_block_delta\ndata: " + `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`,
		"event: content_block_stop\ndata: " + `{"type":"content_block_stop","index":0}`,
		"event: message_delta\ndata: " + `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}`,
		"event: message_stop\ndata: " + `{"type":"message_stop"}`,
	}
	for _, tc := range []struct {
		name, provider, model, path, body string
		events                            []string
	}{
		{"openai", "openai", "gpt-4o", "/v1/chat/completions",
			`{"model":"r","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`, oa},
		{"anthropic", "anthropic", "claude-sonnet-4-5", "/v1/messages",
			`{"model":"r","stream":true,"max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`, an},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The upstream holds its terminator until the gateway's handler
			// returned: the answer reached the client without it.
			var conns atomic.Int64
			served := make(chan struct{})
			up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				for i, ev := range tc.events {
					if i == len(tc.events)-1 {
						select {
						case <-served:
						case <-r.Context().Done():
							return
						}
					}
					if !strings.HasPrefix(ev, "event:") {
						ev = "data: " + ev
					}
					_, _ = io.WriteString(w, ev+"\n\n")
					w.(http.Flusher).Flush()
				}
			}))
			up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			up.Start()
			defer up.Close()
			base := up.URL
			if tc.provider == "openai" {
				base += "/v1"
			}
			yaml := "providers:\n  " + tc.provider + ": {base_url: " + base + ", api_key: test-key}\n" +
				"routes:\n  r:\n    targets: [" + tc.provider + "/" + tc.model + "]\n"
			srv, _ := newGateway(t, yaml, provider.NewHTTPClient(nil), nil, nil)
			pooled := make(chan error, 1)
			var reused atomic.Bool
			trace := &httptrace.ClientTrace{
				GotConn:     func(i httptrace.GotConnInfo) { reused.Store(i.Reused) },
				PutIdleConn: func(err error) { pooled <- err },
			}
			const streams = 3
			for i := range streams {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
				req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
				srv.Handler().ServeHTTP(rec, req)
				served <- struct{}{}
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Hi") {
					t.Fatalf("stream %d: %d %.300s", i, rec.Code, rec.Body)
				}
				if i > 0 && !reused.Load() {
					t.Errorf("stream %d: a new upstream connection", i)
				}
				select {
				case err := <-pooled:
					if err != nil {
						t.Fatalf("stream %d: the upstream connection was not pooled: %v", i, err)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("stream %d: the upstream connection was not returned to the pool (closed before its terminator)", i)
				}
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("%d streams opened %d upstream connections, want 1", streams, n)
			}
		})
	}
}
