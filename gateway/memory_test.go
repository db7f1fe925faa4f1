package gateway

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
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

// heapHeld is the heap memory the process holds from the system: its
// objects (live, and dead ones not yet swept), the free pages it has not
// returned, and the unused parts of its spans (runtime/metrics).
func heapHeld() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	var n uint64
	for _, v := range s {
		n += v.Value.Uint64()
	}
	return n
}

// TestIdleAfterBurst: 10 s after a burst of 512 KB requests ends, the
// gateway holds from the system no more heap than it did idle before it
// (issue 19 item 4: it held 35-46 MiB for minutes), by its own reclaim
// (debug.FreeOSMemory) and no collection of the test's.
func TestIdleAfterBurst(t *testing.T) {
	body := func(size int) []byte {
		return []byte(strings.Replace(string(agentBody(DialectOpenAI, DialectOpenAI, size)), `"model":"to-openai"`, `"model":"default"`, 1))
	}
	small, large := body(1<<10), body(512<<10)
	synctest.Test(t, func(t *testing.T) {
		h := fixedServer(t, "Done.").Handler()
		post := func(body []byte) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body)))
			if rec.Code != http.StatusOK {
				t.Errorf("status %d: %.200s", rec.Code, rec.Body)
			}
		}
		post(small)
		debug.FreeOSMemory()
		idle := heapHeld()
		var wg sync.WaitGroup
		for range 16 { // 16 clients send 4 each
			wg.Go(func() {
				for range 4 {
					post(large)
				}
			})
		}
		wg.Wait()
		burst := heapHeld()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		later := heapHeld()
		mib := func(n uint64) float64 { return float64(n) / (1 << 20) }
		t.Logf("heap held: %.1f MiB idle, %.1f at the burst's end, %.1f 10 s later", mib(idle), mib(burst), mib(later))
		const slack = 4 << 20
		if later > idle+slack {
			t.Errorf("10 s after the burst the heap holds %.1f MiB, want at most %.1f (idle before it, %.1f, and %.0f MiB of slack); %.1f at its end",
				mib(later), mib(idle+slack), mib(idle), mib(slack), mib(burst))
		}
	})
}
