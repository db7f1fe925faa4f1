package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/llmguard/llmguard/provider"
)

// idle is how many bytes of idle body buffers p holds.
func (p *bodyPool) idleBytes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idle
}

// TestBodyPool: buffers come in classes of 64 KiB doubling to 1 MiB, a
// buffer put back is the next one got of its class, and the pool keeps
// no more than maxPoolBytes idle.
func TestBodyPool(t *testing.T) {
	var p bodyPool
	for _, tt := range []struct{ n, size int }{{minPooledBody + 1, 64 << 10}, {64 << 10, 64 << 10}, {64<<10 + 1, 128 << 10},
		{300 << 10, 512 << 10}, {512 << 10, 512 << 10}, {maxPooledBody, 1 << 20}} {
		if b := p.get(tt.n); len(b) != tt.size {
			t.Errorf("get(%d): %d bytes, want %d", tt.n, len(b), tt.size)
		}
	}
	b := p.get(200 << 10)
	p.put(b)
	if got := p.get(256 << 10); &got[0] != &b[0] {
		t.Error("get after put: a fresh buffer, want the one put back")
	}
	for range maxPoolBytes/(1<<20) + 2 {
		p.put(make([]byte, 1<<20))
	}
	if got := p.idleBytes(); got != maxPoolBytes {
		t.Errorf("%d bytes idle after puts past the bound, want %d", got, maxPoolBytes)
	}
	p.drain()
	if got := p.idleBytes(); got != 0 {
		t.Errorf("%d bytes idle after drain, want 0", got)
	}
}

// TestPooledBodyHold: a pooled body goes back to the pool when its last
// holder lets go, after which it can't be acquired; a kept one (its
// client left) never goes back.
func TestPooledBodyHold(t *testing.T) {
	body := strings.Repeat("x", 100<<10)
	for _, tt := range []struct {
		name string
		keep func(*pooledBody)
		left bool
		back bool
	}{
		{name: "released", back: true},
		{name: "kept", keep: (*pooledBody).keep},
		{name: "client left", left: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newReclaimer()
			r.free = func() {}
			held, b, err := r.readPooled(strings.NewReader(body), len(body))
			if err != nil || held == nil || string(b) != body || cap(b) != len(body) {
				t.Fatalf("readPooled = %v, %d bytes (cap %d), %v; want a pooled body of %d", held, len(b), cap(b), err, len(body))
			}
			if !held.Acquire() { // an upstream send
				t.Fatal("Acquire = false while the handler holds it")
			}
			if tt.keep != nil {
				tt.keep(held)
			}
			held.end(tt.left)
			if got := r.bodies.idleBytes(); got != 0 {
				t.Fatalf("%d bytes back in the pool while a send holds the body", got)
			}
			held.Release()
			want := 0
			if tt.back {
				want = 128 << 10
			}
			if got := r.bodies.idleBytes(); got != want {
				t.Errorf("%d bytes idle after the last release, want %d", got, want)
			}
			if got := held.Acquire(); got != !tt.back {
				t.Errorf("Acquire after the last release = %v, want %v", got, !tt.back)
			}
		})
	}
}

// TestReadPooled: a body shorter than its Content-Length is an error (its
// buffer goes back), a longer one is read whole into a buffer of its own.
func TestReadPooled(t *testing.T) {
	r := newReclaimer()
	if held, _, err := r.readPooled(strings.NewReader(strings.Repeat("x", 40<<10)), 50<<10); err != io.ErrUnexpectedEOF || held != nil {
		t.Errorf("short body: %v, %v; want %v", held, err, io.ErrUnexpectedEOF)
	}
	if got := r.bodies.idleBytes(); got != 64<<10 {
		t.Errorf("%d bytes idle after a failed read, want the buffer back (%d)", got, 64<<10)
	}
	long := strings.Repeat("y", 70<<10)
	held, b, err := r.readPooled(strings.NewReader(long), 50<<10)
	if err != nil || held != nil || string(b) != long {
		t.Errorf("long body: %v, %d bytes, %v; want %d bytes of its own", held, len(b), err, len(long))
	}
}

// TestDecodeChatHold: a pooled body is its relayed request's Passthrough
// Hold; the whole decoding (Full, or Lean with its texts in Part.Raw)
// reads the buffer itself, with no copy (its texts are slices of it), and
// gives what the whole decoder gives; a reader that holds the request
// keeps its buffer from the pool until it lets go; once a buffer has gone
// back, the decoding (an attempt that outlived its request) fails instead
// of reading it.
func TestDecodeChatHold(t *testing.T) {
	for _, dialect := range []string{DialectOpenAI, DialectAnthropic} {
		body := agentBody(dialect, DialectOpenAI, 100<<10)
		want, err := decodeChatWhole(dialect, string(body))
		if err != nil {
			t.Fatal(err)
		}
		for _, decode := range []string{"", "full", "lean"} {
			r := newReclaimer()
			held, b, err := r.readPooled(strings.NewReader(string(body)), len(body))
			if err != nil {
				t.Fatal(err)
			}
			in, err := decodeChat(dialect, b, held)
			if err != nil {
				t.Fatal(err)
			}
			if in.req.Passthrough.Hold != held {
				t.Fatalf("Passthrough.Hold = %v, want the pooled body", in.req.Passthrough.Hold)
			}
			if decode == "" {
				held.end(false)
				if got := r.bodies.idleBytes(); got == 0 {
					t.Errorf("%s, undecoded: no buffer back in the pool", dialect)
				}
				if _, err := in.req.Full(); err != errBodyReused {
					t.Errorf("Full after the buffer went back = %v, want %v", err, errBodyReused)
				}
				continue
			}
			decoded := in.req.Full
			if decode == "lean" {
				decoded = in.req.Lean
			}
			got, err := decoded()
			if err != nil {
				t.Fatal(err)
			}
			raws, copied := rawsIn(got, b)
			if copied {
				t.Fatalf("%s, %s: a Part.Raw outside the body's buffer (a copy)", dialect, decode)
			}
			if decode == "lean" && dialect == DialectAnthropic && raws == 0 {
				t.Errorf("%s: the lean decoding has no text in Part.Raw", dialect)
			}
			full, err := in.req.Full()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(full.Messages, want.req.Messages) || !reflect.DeepEqual(full.Tools, want.req.Tools) ||
				!reflect.DeepEqual(full.Extra, want.req.Extra) {
				t.Errorf("%s, decoded %q: not what the whole decoder gives", dialect, decode)
			}
			if !in.req.Acquire() { // a hedge branch, say
				t.Fatal("Acquire = false while the handler holds the body")
			}
			held.end(false)
			if got := r.bodies.idleBytes(); got != 0 {
				t.Errorf("%s, decoded %q: %d bytes back in the pool while a reader holds the request", dialect, decode, got)
			}
			in.req.Release()
			if got := r.bodies.idleBytes(); got == 0 {
				t.Errorf("%s, decoded %q: no buffer back in the pool once the last reader let go", dialect, decode)
			}
			if in.req.Acquire() {
				t.Errorf("%s, decoded %q: Acquire = true once the buffer went back", dialect, decode)
			}
		}
	}
}

// rawsIn counts the parts of req with a Part.Raw, and reports whether one
// lies outside b's array.
func rawsIn(req *provider.Request, b []byte) (n int, outside bool) {
	for _, m := range req.Messages {
		for _, p := range m.Content {
			if p.Raw != nil {
				n++
				outside = outside || !within(p.Raw, b)
			}
		}
	}
	return n, outside
}

// within reports whether p lies in b's array.
func within(p, b []byte) bool {
	if len(p) == 0 {
		return false
	}
	b = b[:cap(b)]
	start, end := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&b[0]))+uintptr(len(b))
	at := uintptr(unsafe.Pointer(&p[0]))
	return at >= start && at+uintptr(len(p)) <= end
}

// TestReclaimDrainsBodies: reclaimAfter after the last large body the
// pooled body buffers are let go with the rest of the free memory.
func TestReclaimDrainsBodies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newReclaimer()
		var frees atomic.Int32
		r.free = func() { frees.Add(1) }
		body := strings.Repeat("z", 512<<10)
		held, _, err := r.readPooled(strings.NewReader(body), len(body))
		if err != nil {
			t.Fatal(err)
		}
		r.large(len(body))
		held.end(false)
		if got := r.bodies.idleBytes(); got != 512<<10 {
			t.Fatalf("%d bytes idle after the request, want its buffer (%d)", got, 512<<10)
		}
		time.Sleep(reclaimAfter)
		synctest.Wait()
		if got, n := r.bodies.idleBytes(), frees.Load(); got != 0 || n != 1 {
			t.Errorf("reclaimAfter after the burst: %d bytes idle, %d reclaims; want 0, 1", got, n)
		}
	})
}

// TestPooledBodiesRelay: long bodies relayed at once by several clients
// through one gateway, OpenAI and Anthropic, relayed or translated (an
// Anthropic body's texts sent to OpenAI as slices of its buffer), reach the upstream whole and
// each its own (no buffer is reused while a send reads it: -race), and
// one after another they reuse one buffer, relayed or translated (a
// translated request's decoding holds it no longer than its call).
func TestPooledBodiesRelay(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		raw, err := io.ReadAll(r.Body)
		if err == nil {
			err = json.Unmarshal(raw, &req)
		}
		if err != nil || len(req.Messages) == 0 || len(req.Messages[0].Content) < 8 {
			http.Error(w, fmt.Sprintf("bad body (%d bytes): %v", len(raw), err), http.StatusBadRequest)
			return
		}
		mark := req.Messages[0].Content[:8]
		for _, m := range req.Messages {
			if m.Content != pooledContent(mark) {
				http.Error(w, "messages of another request: "+mark, http.StatusBadRequest)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/messages") {
			fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":%q,"content":[{"type":"text","text":%q}],"stop_reason":"end_turn","usage":{"input_tokens":9,"output_tokens":1}}`, req.Model, mark)
			return
		}
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}`, req.Model, mark)
	}))
	defer up.Close()
	srv := twoDialects(t, up.URL)
	gs := httptest.NewServer(srv.Handler())
	defer gs.Close()
	// post sends a body in dialect to route (its dialect's own route
	// when "") whose messages all carry mark, and checks the answer.
	post := func(dialect, route, mark string) error {
		path, model, answer := "/v1/chat/completions", "to-openai", func(b []byte) (string, error) {
			var a struct {
				Choices []struct{ Message struct{ Content string } }
			}
			if err := json.Unmarshal(b, &a); err != nil || len(a.Choices) == 0 {
				return "", fmt.Errorf("answer %.200s: %v", b, err)
			}
			return a.Choices[0].Message.Content, nil
		}
		if dialect == DialectAnthropic {
			path, model, answer = "/v1/messages", "to-anthropic", func(b []byte) (string, error) {
				var a struct{ Content []struct{ Text string } }
				if err := json.Unmarshal(b, &a); err != nil || len(a.Content) == 0 {
					return "", fmt.Errorf("answer %.200s: %v", b, err)
				}
				return a.Content[0].Text, nil
			}
		}
		if route != "" {
			model = route
		}
		msgs := make([]map[string]string, 0, 40)
		for i := range 40 {
			role := []string{"user", "assistant"}[i%2]
			msgs = append(msgs, map[string]string{"role": role, "content": pooledContent(mark)})
		}
		body, _ := json.Marshal(map[string]any{"model": model, "max_tokens": 16, "messages": msgs})
		resp, err := gs.Client().Post(gs.URL+path, "application/json", strings.NewReader(string(body)))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: status %d: %.300s", mark, resp.StatusCode, b)
		}
		if got, err := answer(b); err != nil || got != mark {
			return fmt.Errorf("%s: answered %q, %v", mark, got, err)
		}
		return nil
	}
	var wg sync.WaitGroup
	var failed atomic.Int32
	for g := range 4 {
		wg.Go(func() {
			for i := range 6 {
				dialect, route := []string{DialectOpenAI, DialectAnthropic}[(g+i)%2], ""
				if i%3 == 2 && dialect == DialectAnthropic {
					route = "to-openai" // translated, its texts sent from the buffer as they are
				}
				if err := post(dialect, route, fmt.Sprintf("m%02d-%04d", g, i)); err != nil && failed.Add(1) < 4 {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	// One after another: each request's buffer is back before the next
	// takes it (the transport closes a sent body just after the answer),
	// a translated one's too (nothing holds it past its send).
	srv.reclaim.bodies.drain()
	for i := range 4 {
		dialect, route := DialectOpenAI, ""
		if i%2 == 1 {
			dialect, route = DialectAnthropic, "to-openai"
		}
		if err := post(dialect, route, fmt.Sprintf("seq-%04d", i)); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for srv.reclaim.bodies.idleBytes() == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if got := srv.reclaim.bodies.idleBytes(); got != 128<<10 {
			t.Fatalf("after request %d: %d bytes of body buffers idle, want one of %d (reused)", i, got, 128<<10)
		}
	}
}

// pooledContent is TestPooledBodiesRelay's message text for mark: about
// 2.5 KB, with escapes.
func pooledContent(mark string) string {
	return mark + strings.Repeat(" \"quoted\"\n\tline — "+mark, 100)
}

// lateReader is a transport that answers at once and reads each request's
// body only when told, then closes it, as net/http's may (RoundTrip
// returns once the answer is in; the body may still be being sent).
type lateReader struct {
	answer string
	bodies chan io.ReadCloser
}

func (l *lateReader) RoundTrip(r *http.Request) (*http.Response, error) {
	l.bodies <- r.Body
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(l.answer)), Request: r}, nil
}

// TestPooledBodyOutlivesHandler: a body the transport has not finished
// sending when the answer came back keeps its buffer past the handler's
// end: the next request gets another, and the late reader reads the body
// it was given. So does an Anthropic body translated for OpenAI, whose
// texts are sent as slices of its buffer.
func TestPooledBodyOutlivesHandler(t *testing.T) {
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		t.Run(path, func(t *testing.T) {
			lr := &lateReader{bodies: make(chan io.ReadCloser, 2),
				answer: `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`}
			srv, _ := newGateway(t, "providers:\n  openai: {base_url: http://127.0.0.1:9/v1, api_key: k}\n"+
				"routes:\n  to-openai:\n    targets: [openai/gpt-4o]\n", &http.Client{Transport: lr}, nil, nil)
			h := srv.Handler()
			post := func(mark string) {
				msgs := make([]map[string]string, 0, 40)
				for range 40 {
					msgs = append(msgs, map[string]string{"role": "user", "content": pooledContent(mark)})
				}
				body, _ := json.Marshal(map[string]any{"model": "to-openai", "max_tokens": 16, "messages": msgs})
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(body))))
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d: %.300s", rec.Code, rec.Body)
				}
			}
			post("first-01")
			post("second-2") // the first body is not sent yet: its buffer is not the pool's
			for _, mark := range []string{"first-01", "second-2"} {
				b := <-lr.bodies
				raw, err := io.ReadAll(b)
				b.Close()
				var req struct{ Messages []struct{ Content string } }
				if err == nil {
					err = json.Unmarshal(raw, &req)
				}
				if err != nil || len(req.Messages) != 40 || req.Messages[39].Content != pooledContent(mark) {
					t.Errorf("the transport read %d bytes (%v) for %s: %.60s", len(raw), err, mark, raw)
				}
			}
			if got := srv.reclaim.bodies.idleBytes(); got != 2*(128<<10) {
				t.Errorf("%d bytes of body buffers idle once both were sent, want two of %d", got, 128<<10)
			}
		})
	}
}
