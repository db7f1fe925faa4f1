package gateway

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/internal/heap"
)

// TestModelNameLimit: a model (or fallback) name over 256 bytes is a 400 in
// the path's dialect, and the answer does not echo it whole.
func TestModelNameLimit(t *testing.T) {
	st := newStack(t, nil)
	long := "openai/" + strings.Repeat("m", 257)
	tests := []struct {
		name, path, body, errType string
	}{
		{"openai model", "/v1/chat/completions", oaBody(long, false, ""), "invalid_request_error"},
		{"anthropic model", "/v1/messages", anBody(long, false, ""), "invalid_request_error"},
		{"anthropic count_tokens", "/v1/messages/count_tokens", anBody(long, false, ""), "invalid_request_error"},
		{"responses model", "/v1/responses", `{"model":"` + long + `","input":"hi"}`, "invalid_request_error"},
		{"fallback", "/v1/chat/completions", oaBody("oai", false, `,"fallbacks":["`+long+`"]`), "invalid_request_error"},
		{"too many fallbacks", "/v1/chat/completions", oaBody("oai", false, `,"fallbacks":[`+strings.Repeat(`"oai",`, maxFallbacks)+`"oai"]`), "invalid_request_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := st.post(t, tt.path, tt.body)
			if r.status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %.300s", r.status, r.body)
			}
			if typ := dig(decodeJSON(t, r.body), "error", "type"); typ != tt.errType {
				t.Errorf("error type %v: %s", typ, r.body)
			}
			if len(r.body) > 1024 {
				t.Errorf("error body of %d bytes", len(r.body))
			}
		})
	}
	// 256 bytes is a name like any other.
	if r := st.post(t, "/v1/chat/completions", oaBody("openai/"+strings.Repeat("m", 249), false, "")); r.status == http.StatusBadRequest {
		t.Errorf("a 256-byte model name is refused: %s", r.body)
	}
}

// TestHugeModelNamesHoldNoMemory: the run held +310 MB of heap
// after ten requests with 5 MB model names.
func TestHugeModelNamesHoldNoMemory(t *testing.T) {
	st := newStack(t, nil)
	before := heap.Live()
	name := "openai/" + strings.Repeat("m", 5<<20)
	for range 10 {
		r := st.post(t, "/v1/chat/completions", oaBody(name, false, ""))
		if r.status != http.StatusBadRequest || len(r.body) > 1024 {
			t.Fatalf("status %d, %d-byte body", r.status, len(r.body))
		}
	}
	grown := int64(heap.Live()) - int64(before)
	t.Logf("heap after ten requests with 5 MB model names: %+d KB", grown>>10)
	if grown > 16<<20 {
		t.Errorf("heap grew by %d MB", grown>>20)
	}
	runtime.KeepAlive(st)
}

// TestResultHeadersBounded: what an upstream sends (its request id) goes
// into response headers cut to a bounded length.
func TestResultHeadersBounded(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req_"+strings.Repeat("x", 8<<10))
		w.Write([]byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	}))
	defer up.Close()
	st := newStackConfig(t, "providers:\n  openai: {base_url: "+up.URL+", api_key: test-oai-key}\nroutes:\n  default:\n    targets: [openai/m]\n", nil)
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		body := oaBody("default", false, "")
		if path == "/v1/messages" {
			body = anBody("default", false, "")
		}
		r := st.post(t, path, body)
		if r.status != 200 {
			t.Fatalf("%s: status %d: %.300s", path, r.status, r.body)
		}
		for k, vs := range r.header {
			for _, v := range vs {
				if len(v) > maxHeaderValue {
					t.Errorf("%s: header %s of %d bytes", path, k, len(v))
				}
			}
		}
		if !strings.HasPrefix(r.header.Get("X-Llmguard-Upstream-Request-Id"), "req_xxx") {
			t.Errorf("%s: request id header %q", path, r.header.Get("X-Llmguard-Upstream-Request-Id"))
		}
	}
}
