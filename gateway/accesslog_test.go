package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/internal/syncbuf"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// logBuffer collects JSON log lines; safe for the handler and the test.
type logBuffer struct{ syncbuf.Buffer }

// access returns the decoded access lines.
func (l *logBuffer) access(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == "access" {
			out = append(out, m)
		}
	}
	return out
}

// loggedGateway is the stack's engine and config behind a second gateway
// whose logs go to a buffer (the stack's own gateway logs nothing).
func loggedGateway(t *testing.T, st *stack, keys ...string) (*pipenet.Server, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	srv, err := New(&Options{Engine: st.srv.eng, Catalog: st.srv.cat, Keys: keys, Now: st.now,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	gw := pipenet.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	return gw, logs
}

func postTo(t *testing.T, gw *pipenet.Server, path, body string, hdr ...string) (int, []byte) {
	t.Helper()
	return send(t, gw, http.MethodPost, path, body, hdr...)
}

// send makes one request to gw with hdr (name, value pairs) and returns
// its status and body.
func send(t *testing.T, gw *pipenet.Server, method, path, body string, hdr ...string) (int, []byte) {
	t.Helper()
	res := pipenet.Do(t, gw.Client(), method, gw.URL+path, body, hdr...)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// Issue 10 item 9: one access line per request at info, with route, target,
// status, attempts, fallbacks, ms and the upstream request id; no key and no
// content.
func TestAccessLog(t *testing.T) {
	tests := []struct {
		name, path, body string
		want             map[string]any // fields that must have these values
		requestID        bool           // request_id is an upstream id
	}{
		{"success", "/v1/chat/completions", oaBody("default", false, ""),
			map[string]any{"model": "default", "route": "default", "target": "anthropic/claude-sonnet-4-5", "status": 200.0, "attempts": 1.0, "fallbacks": 0.0, "path": "/v1/chat/completions"}, true},
		{"fallback", "/v1/messages", anBody("overloaded", false, ""),
			map[string]any{"route": "overloaded", "target": "openai/gpt-4o", "status": 200.0, "fallbacks": 1.0}, true},
		{"upstream 401", "/v1/chat/completions", oaBody("bad-key", false, ""),
			map[string]any{"route": "bad-key", "target": "openai/gpt-4o+fault=401", "status": 401.0, "attempts": 1.0, "fallbacks": 0.0}, true},
		{"stream", "/v1/messages", anBody("oai", true, ""),
			map[string]any{"route": "oai", "target": "openai/gpt-4o", "status": 200.0, "attempts": 1.0, "stream": true}, true},
		{"stream continued on another target", "/v1/chat/completions", oaBody("continue-prefill", true, ""),
			map[string]any{"route": "continue-prefill", "target": "anthropic/m1", "status": 200.0, "stream": true}, true},
		{"stream with a malformed event skipped", "/v1/chat/completions", oaBody("malformed", true, ""),
			map[string]any{"route": "malformed", "status": 200.0, "stream": true, "malformed_events": 1.0}, true},
		{"unknown model", "/v1/chat/completions", oaBody("gpt-5", false, ""),
			map[string]any{"model": "gpt-5", "route": "", "target": "", "status": 404.0, "attempts": 0.0}, false},
		{"gateway key missing", "/v1/chat/completions", oaBody("default", false, ""),
			map[string]any{"status": 401.0, "attempts": 0.0}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := newStack(t, nil)
				var keys, hdr []string
				if tt.name == "gateway key missing" {
					keys = []string{"gw-secret-key"}
				} else if tt.name == "success" {
					keys, hdr = []string{"gw-secret-key"}, []string{"Authorization", "Bearer gw-secret-key"}
				}
				gw, logs := loggedGateway(t, st, keys...)
				status, body := postTo(t, gw, tt.path, tt.body, hdr...)
				lines := logs.access(t)
				if len(lines) != 1 {
					t.Fatalf("%d access lines, want 1 (status %d %s):\n%s", len(lines), status, body, logs)
				}
				m := lines[0]
				if m["level"] != "INFO" {
					t.Errorf("level %v, want INFO", m["level"])
				}
				for k, v := range tt.want {
					if m[k] != v {
						t.Errorf("%s = %#v, want %#v (line %v)", k, m[k], v, m)
					}
				}
				for _, k := range []string{"route", "target", "status", "attempts", "fallbacks", "ms", "request_id", "method", "path"} {
					if _, ok := m[k]; !ok {
						t.Errorf("no %s in %v", k, m)
					}
				}
				if id, _ := m["request_id"].(string); tt.requestID != strings.HasPrefix(id, "req_") {
					t.Errorf("request_id %q (want an upstream id: %v)", id, tt.requestID)
				}
				if ms, _ := m["ms"].(float64); ms < 0 {
					t.Errorf("ms %v", ms)
				}
				all := logs.String()
				for _, secret := range []string{"gw-secret-key", "test-ant-key", "test-oai-key", "Say hello", "gateway please"} {
					if strings.Contains(all, secret) {
						t.Errorf("logs contain %q:\n%s", secret, all)
					}
				}
			})
		})
	}
}

// gateStream sends one chunk, then waits for release before finishing.
type gateStream struct {
	n       int
	release chan struct{}
	ctx     context.Context
}

func (g *gateStream) Recv() (provider.Chunk, error) {
	g.n++
	switch g.n {
	case 1:
		return provider.Chunk{Text: "Hello"}, nil
	case 2:
		select {
		case <-g.release:
		case <-g.ctx.Done():
			return provider.Chunk{}, g.ctx.Err()
		}
		return provider.Chunk{Text: " world", FinishReason: "stop"}, nil
	}
	return provider.Chunk{}, io.EOF
}

func (g *gateStream) Close() error      { return nil }
func (g *gateStream) RequestID() string { return "req_gate" }

type gateEngine struct {
	Engine
	st *gateStream
}

func (e *gateEngine) Stream(ctx context.Context, c *resilience.Call) (*resilience.StreamResult, error) {
	e.st.ctx = ctx
	return &resilience.StreamResult{Stream: e.st, Target: "p/a", Attempts: 2, Fallbacks: 1}, nil
}

func (e *gateEngine) Routes() map[string][]string { return map[string][]string{"r": {"p/a"}} }

// A stream is logged once, when it ends, not when its headers went out.
func TestAccessLogAtStreamEnd(t *testing.T) {
	logs := &logBuffer{}
	e := &gateEngine{st: &gateStream{release: make(chan struct{})}}
	srv, err := New(&Options{Engine: e, Catalog: &catalog.Catalog{Providers: map[string]string{"p": ""}},
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(srv.Handler())
	defer gw.Close()
	res, err := http.Post(gw.URL+"/v1/chat/completions", "application/json", strings.NewReader(oaBody("r", true, "")))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	rd := bufio.NewReader(res.Body)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before its first chunk: %v", err)
		}
		if strings.Contains(line, "Hello") {
			break
		}
	}
	if n := len(logs.access(t)); n != 0 {
		t.Fatalf("%d access lines while the stream is still open:\n%s", n, logs)
	}
	close(e.st.release)
	io.Copy(io.Discard, rd)
	lines := logs.access(t)
	if len(lines) != 1 {
		t.Fatalf("%d access lines after the stream ended:\n%s", len(lines), logs)
	}
	m := lines[0]
	if m["target"] != "p/a" || m["attempts"] != 2.0 || m["fallbacks"] != 1.0 || m["request_id"] != "req_gate" || m["stream"] != true {
		t.Errorf("access line %v", m)
	}
}

// TestAccessLineText pins the access line of a text log byte for byte
// (its time and duration aside), the source of a handler that adds it
// included: the line is a contract.
func TestAccessLineText(t *testing.T) {
	res := &resilience.Result{Target: "openai/gpt-4o", Attempts: 2, Fallbacks: 1, Cost: 0.0025, Wasted: 0.001,
		Response: &provider.Response{ID: "chatcmpl-1", Model: "gpt-4o", Text: "Hello.", FinishReason: "stop", RequestID: "req_1"}}
	var logs strings.Builder
	h := slog.NewTextHandler(&logs, &slog.HandlerOptions{AddSource: true, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		switch a.Key {
		case slog.TimeKey:
			return slog.Attr{}
		case "ms":
			return slog.Float64("ms", 1.5)
		case slog.SourceKey:
			src := a.Value.Any().(*slog.Source)
			return slog.String("source", path.Base(src.File)+" "+path.Base(src.Function))
		}
		return a
	}})
	srv, err := New(&Options{Engine: fixedEngine{res: res}, Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the first line looks the source up, the second reuses it
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(oaBody("default", false, ""))))
		if rec.Code != 200 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
	const want = `level=INFO source="accesslog.go gateway.(*Server).endAccess" msg=access method=POST path=/v1/chat/completions` +
		` model=default route=default target=openai/gpt-4o status=200 attempts=2 fallbacks=1 ms=1.5 request_id=req_1` +
		` cost_usd=0.0025 wasted_usd=0.001` + "\n"
	if got := logs.String(); got != want+want {
		t.Errorf("access lines\n%s\nwant twice\n%s", got, want)
	}
}

// BenchmarkAccessLog is the handler's cost per request with the access line
// off (a logger that drops info) and on (text and JSON to io.Discard).
func BenchmarkAccessLog(b *testing.B) {
	res := &resilience.Result{Target: "openai/gpt-4o", Attempts: 1, Response: &provider.Response{ID: "chatcmpl-1",
		Model: "gpt-4o", Text: "Hello.", FinishReason: "stop", RequestID: "req_1"}}
	body := oaBody("default", false, "")
	for _, l := range []struct {
		name string
		h    slog.Handler
	}{
		{"off", slog.DiscardHandler},
		{"text", slog.NewTextHandler(io.Discard, nil)},
		{"json", slog.NewJSONHandler(io.Discard, nil)},
	} {
		b.Run(l.name, func(b *testing.B) {
			srv, err := New(&Options{Engine: fixedEngine{res: res}, Logger: slog.New(l.h)})
			if err != nil {
				b.Fatal(err)
			}
			h := srv.Handler()
			rd := strings.NewReader(body)
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset(body)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", rd))
				if rec.Code != 200 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
