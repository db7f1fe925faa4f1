package gateway

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
)

// pipeNet is an in-memory network for a synctest bubble: Dial makes a
// net.Pipe and Accept hands out its far end. Loopback sockets would stop
// the bubble's clock (a goroutine blocked on a socket is not durably
// blocked); HTTP over pipes is the same protocol, in virtual time.
type pipeNet struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeNet() *pipeNet { return &pipeNet{conns: make(chan net.Conn), closed: make(chan struct{})} }

func (n *pipeNet) Accept() (net.Conn, error) {
	select {
	case c := <-n.conns:
		return c, nil
	case <-n.closed:
		return nil, net.ErrClosed
	}
}

func (n *pipeNet) Close() error   { n.once.Do(func() { close(n.closed) }); return nil }
func (n *pipeNet) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

func (n *pipeNet) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	c, s := net.Pipe()
	select {
	case n.conns <- s:
		return c, nil
	case <-n.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// serve runs h on the network until the test ends.
func (n *pipeNet) serve(t *testing.T, h http.Handler) *http.Client {
	srv := &http.Server{Handler: h}
	go srv.Serve(n)
	tr := &http.Transport{DialContext: n.Dial}
	t.Cleanup(func() {
		srv.Close()
		tr.CloseIdleConnections()
	})
	return &http.Client{Transport: tr}
}

// longConfig has only default policies: a 30 s header timeout, 15 s to the
// first token, 20 s of idle, 60 s for the whole call.
const longConfig = `
providers:
  anthropic: {base_url: http://mock, api_key: test-ant-key}
  openai: {base_url: http://mock/v1, api_key: test-oai-key}
routes:
  long-ant:
    targets: ["anthropic/claude-sonnet-4-5+fault=long:40"]
  long-oai:
    targets: ["openai/gpt-4o+fault=long:40"]
`

// A non-streaming answer that takes 40 s to generate arrives whole under
// the default config: the engine asks the upstream for a stream and
// assembles it, so the 30 s header timeout (which a non-streaming upstream
// answers only at the end) does not cut it, while the first-token and idle
// timeouts still watch for silence. Virtual time: the test takes no 40 s.
func TestLongAnswerNotStreamed(t *testing.T) {
	for _, d := range dialects() {
		for _, route := range []string{"long-ant", "long-oai"} {
			t.Run(d.name+"/"+route, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					cfg, err := config.Parse("long.yaml", []byte(longConfig), nil)
					if err != nil {
						t.Fatal(err)
					}
					upNet, gwNet := newPipeNet(), newPipeNet()
					m := mock.New(nil)
					t.Cleanup(m.Close)
					adapters, err := registry.Build(cfg.ProviderSettings(), upNet.serve(t, m))
					if err != nil {
						t.Fatal(err)
					}
					quiet := slog.New(slog.DiscardHandler)
					eo := cfg.EngineOptions()
					eo.Adapters, eo.Logger = adapters, quiet
					eng, err := resilience.New(eo)
					if err != nil {
						t.Fatal(err)
					}
					srv, err := New(&Options{Engine: eng, Catalog: cfg.Catalog(), Logger: quiet})
					if err != nil {
						t.Fatal(err)
					}
					client := gwNet.serve(t, srv.Handler())
					req, _ := http.NewRequest(http.MethodPost, "http://gateway"+d.path, strings.NewReader(d.body(route, "")))
					for i := 0; i+1 < len(d.hdr); i += 2 {
						req.Header.Set(d.hdr[i], d.hdr[i+1])
					}
					start := time.Now()
					res, err := client.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					body, _ := io.ReadAll(res.Body)
					res.Body.Close()
					took := time.Since(start)
					t.Logf("%d after %v: %s", res.StatusCode, took, body)
					if res.StatusCode != 200 {
						t.Fatalf("status %d: %s", res.StatusCode, body)
					}
					if took < 35*time.Second {
						t.Errorf("answered after %v: the answer was not long", took)
					}
					m2 := decodeJSON(t, body)
					var text, finish string
					var out float64
					if d.name == DialectAnthropic {
						text, _ = dig(m2, "content", 0, "text").(string)
						finish, _ = m2["stop_reason"].(string)
						out, _ = dig(m2, "usage", "output_tokens").(float64)
					} else {
						text, _ = dig(m2, "choices", 0, "message", "content").(string)
						finish, _ = dig(m2, "choices", 0, "finish_reason").(string)
						out, _ = dig(m2, "usage", "completion_tokens").(float64)
					}
					if !strings.HasPrefix(text, "Mock answer from ") || (finish != "stop" && finish != "end_turn") || out == 0 {
						t.Errorf("answer %q finish %q output tokens %v", text, finish, out)
					}
					up := m.Requests()
					if len(up) != 1 || !up[0].Stream || res.Header.Get("X-Llmguard-Upstream-Request-Id") != up[0].RequestID {
						t.Errorf("upstream %+v; x-llmguard-upstream-request-id %q", up, res.Header.Get("X-Llmguard-Upstream-Request-Id"))
					}
				})
			})
		}
	}
}

// asStreamed is a client's decoded non-streaming request body as the
// upstream gets it: asked for as a stream (the engine assembles the
// answer), with usage in the stream for the OpenAI dialect.
func asStreamed(body any, openai bool) any {
	m, ok := body.(map[string]any)
	if !ok || m["stream"] == true {
		return body
	}
	m["stream"] = true
	if openai {
		m["stream_options"] = map[string]any{"include_usage": true}
	}
	return m
}
