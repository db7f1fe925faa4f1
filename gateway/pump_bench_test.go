package gateway

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkStreamPump streams a 1,000-chunk answer through the gateway from
// an upstream in memory (its body read at once: every event is buffered),
// with no network, so that what it measures is the stream path itself:
// decode, the engine's stream layers, encode, the batch. "compatible" is an
// openai-compatible upstream (its chunks re-encoded), "openai" OpenAI's own
// (relayed as they came). CPU per stream is the process's.
//
//	go test -run '^$' -bench StreamPump -cpuprofile cpu.out ./gateway/
func BenchmarkStreamPump(b *testing.B) {
	head := `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o","service_tier":"default","system_fingerprint":"fp_bench","choices":[`
	var body strings.Builder
	event := func(s string) { body.WriteString("data: " + s + "\n\n") }
	event(head + `{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}`)
	for range 1000 {
		event(head + `{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}]}`)
	}
	event(head + `{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`)
	event(head + `],"usage":{"prompt_tokens":20,"completion_tokens":1000,"total_tokens":1020}}`)
	event("[DONE]")
	up := memUpstream([]byte(body.String()))
	for _, p := range []struct{ name, provider string }{
		{"compatible", "up: {type: openai-compatible, base_url: \"http://127.0.0.1:1/v1\", api_key: k}"},
		{"openai", "openai: {base_url: \"http://127.0.0.1:1/v1\", api_key: k}"},
	} {
		b.Run(p.name, func(b *testing.B) {
			target, _, _ := strings.Cut(p.provider, ":")
			srv, _ := newGateway(b, "providers:\n  "+p.provider+"\nroutes:\n  default:\n    targets: ["+target+"/gpt-4o]\n",
				&http.Client{Transport: up}, nil, nil)
			h := srv.Handler()
			const req = `{"model":"default","messages":[{"role":"user","content":"hi"}],"stream":true}`
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				w := &tailWriter{h: http.Header{}}
				h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(req)))
				if w.code != http.StatusOK || !bytes.HasSuffix(w.tail, []byte("data: [DONE]\n\n")) {
					b.Fatalf("%d, ending %q", w.code, w.tail)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// memUpstream answers every request with body as an event stream.
type memUpstream []byte

func (m memUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(m)), Request: r}, nil
}

// tailWriter is a flushable ResponseWriter that keeps the status and the
// end of what was written.
type tailWriter struct {
	h    http.Header
	code int
	tail []byte
}

func (w *tailWriter) Header() http.Header { return w.h }
func (w *tailWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *tailWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.tail = append(w.tail, p[max(0, len(p)-64):]...)
	if n := len(w.tail); n > 64 {
		w.tail = w.tail[:copy(w.tail, w.tail[n-64:])]
	}
	return len(p), nil
}
func (w *tailWriter) Flush() {}
