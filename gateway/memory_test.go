package gateway

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// fixedServer is a gateway whose engine answers every call with text.
func fixedServer(t *testing.T, text string) *Server {
	t.Helper()
	res := &resilience.Result{Target: "openai/gpt-4o", Attempts: 1, Response: &provider.Response{ID: "chatcmpl-1",
		Model: "gpt-4o", Text: text, FinishReason: "stop"}}
	srv, err := New(&Options{Engine: fixedEngine{res: res}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// pooled drains s's buffer pool and returns the capacities it held.
func pooled(s *Server) []int {
	fresh := false
	s.bufs.New = func() any { fresh = true; b := make([]byte, 0, 8<<10); return &b }
	var caps []int
	for {
		bp := s.bufs.Get().(*[]byte)
		if fresh {
			return caps
		}
		caps = append(caps, cap(*bp))
	}
}

// TestPoolKeepsNoLargeBuffer: after answers of 512 KB the buffer pool
// holds no buffer above maxPooled (issue 19 item 4); small ones it keeps.
func TestPoolKeepsNoLargeBuffer(t *testing.T) {
	for _, tt := range []struct {
		name string
		text string
	}{{"large", strings.Repeat("All work and no play. ", 512<<10/22)}, {"small", "Done."}} {
		t.Run(tt.name, func(t *testing.T) {
			srv := fixedServer(t, tt.text)
			h := srv.Handler()
			body := agentBody(DialectOpenAI, DialectOpenAI, 512<<10)
			body = []byte(strings.Replace(string(body), `"model":"to-openai"`, `"model":"default"`, 1))
			for range 8 {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(string(body))))
				if rec.Code != http.StatusOK || rec.Body.Len() < len(tt.text) {
					t.Fatalf("status %d, %d bytes: %.200s", rec.Code, rec.Body.Len(), rec.Body)
				}
			}
			for _, c := range pooled(srv) {
				if c > 64<<10 {
					t.Errorf("the pool holds a buffer of %d bytes, want none above 64 KiB", c)
				}
			}
		})
	}
}

// TestReclaimAfterBurst: reclaimAfter after the last request body above
// maxPooled the server returns free memory to the system, once per burst;
// small requests never do.
func TestReclaimAfterBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fixedServer(t, "Done.")
		var frees atomic.Int32
		srv.reclaim.free = func() { frees.Add(1) }
		h := srv.Handler()
		post := func(size int) {
			body := agentBody(DialectOpenAI, DialectOpenAI, size)
			body = []byte(strings.Replace(string(body), `"model":"to-openai"`, `"model":"default"`, 1))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(string(body))))
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %.200s", rec.Code, rec.Body)
			}
		}
		step := func(d time.Duration, want int32) {
			t.Helper()
			time.Sleep(d)
			synctest.Wait()
			if got := frees.Load(); got != want {
				t.Fatalf("%d reclaims, want %d", got, want)
			}
		}
		post(1 << 10)
		step(2*reclaimAfter, 0) // small bodies leave nothing to reclaim
		for range 3 {           // a burst of large bodies, a second apart
			post(512 << 10)
			step(time.Second, 0)
		}
		step(reclaimAfter-time.Second-time.Millisecond, 0)
		step(2*time.Millisecond, 1) // reclaimAfter after the last one
		post(1 << 10)
		step(2*reclaimAfter, 1)
		post(512 << 10) // the next burst
		step(reclaimAfter, 2)
	})
}
