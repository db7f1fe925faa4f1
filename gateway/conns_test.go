package gateway

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/provider"
)

// barrier holds each caller until n have arrived, then lets them all go,
// and starts over.
type barrier struct {
	mu   sync.Mutex
	n    int
	in   int
	open chan struct{}
}

func (b *barrier) wait() bool {
	b.mu.Lock()
	ch := b.open
	if b.in++; b.in == b.n {
		close(ch)
		b.in, b.open = 0, make(chan struct{})
	}
	b.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// At N concurrent calls to a plain-HTTP upstream the gateway opens at most
// N connections, and none once its pool is warm: the pool holds what the
// target's max_idle_conns (else its max_concurrency, else 256) says (issue
// 19 item 3: 64 per host opened hundreds a second at 256 calls).
func TestUpstreamConnsReused(t *testing.T) {
	for _, tt := range []struct {
		name, target string
		calls        int
		wantSteady   int // new connections in each later round
	}{
		{"default pool", "openai/gpt-4o", 80, 0},
		{"max_concurrency", "{target: openai/gpt-4o, max_concurrency: 80}", 80, 0},
		{"max_idle_conns smaller than the calls", "{target: openai/gpt-4o, max_idle_conns: 8}", 16, 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			gate := &barrier{n: tt.calls, open: make(chan struct{})}
			var conns atomic.Int64
			up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				if !gate.wait() { // every call in flight at once: one connection each
					http.Error(w, "the round's calls did not all arrive", http.StatusGatewayTimeout)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, fixedOABody)
			}))
			up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			up.Start()
			defer up.Close()
			yaml := "providers:\n  openai: {base_url: " + up.URL + "/v1, api_key: k}\nroutes:\n  default: {targets: [" + tt.target + "]}\n"
			cfg, err := config.Parse("test.yaml", []byte(yaml), nil)
			if err != nil {
				t.Fatal(err)
			}
			client := provider.NewHTTPClient(cfg.Transport()) // as llmguard serve builds it
			defer client.CloseIdleConnections()
			srv, _ := newGateway(t, yaml, client, nil, nil)
			h := srv.Handler()
			for round := range 3 {
				before := conns.Load()
				var wg sync.WaitGroup
				for range tt.calls {
					wg.Go(func() {
						rec := httptest.NewRecorder()
						h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(oaBody("default", false, ""))))
						if rec.Code != http.StatusOK {
							t.Errorf("round %d: status %d: %s", round, rec.Code, rec.Body)
						}
					})
				}
				wg.Wait()
				opened := int(conns.Load() - before)
				switch {
				case round == 0 && opened > tt.calls:
					t.Errorf("round 0: %d new upstream connections for %d calls", opened, tt.calls)
				case round > 0 && opened != tt.wantSteady:
					t.Errorf("round %d: %d new upstream connections for %d calls, want %d", round, opened, tt.calls, tt.wantSteady)
				}
			}
		})
	}
}
