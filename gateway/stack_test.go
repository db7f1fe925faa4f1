package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
)

// newGateway builds the stack every gateway test runs from a config file's
// text: the adapters (on client; nil is the shared transport), a quiet
// engine whose events go to onEvent (may be nil), and the gateway on them
// with o's other options (nil: defaults; Engine, Catalog and Logger are
// set here). It returns the engine too.
func newGateway(tb testing.TB, yaml string, client *http.Client, onEvent func(resilience.Event), o *Options) (*Server, *resilience.Engine) {
	tb.Helper()
	cfg, err := config.Parse("test.yaml", []byte(yaml), nil)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		tb.Fatal(err)
	}
	adapters, err := registry.Build(cfg.ProviderSettings(), client)
	if err != nil {
		tb.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	eo := cfg.EngineOptions()
	eo.Adapters, eo.Logger, eo.OnEvent = adapters, quiet, onEvent
	eng, err := resilience.New(eo)
	if err != nil {
		tb.Fatal(err)
	}
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.Engine, opts.Catalog, opts.Logger = eng, cfg.Catalog(), quiet
	srv, err := New(&opts)
	if err != nil {
		tb.Fatal(err)
	}
	return srv, eng
}

// serveGateway serves newGateway's gateway for yaml (default client, no
// events, default options) on an httptest server the test's cleanup closes.
func serveGateway(t *testing.T, yaml string) *httptest.Server {
	t.Helper()
	srv, _ := newGateway(t, yaml, nil, nil, nil)
	gw := httptest.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	return gw
}

// runGateway serves the stack's gateway through Run on a loopback listener
// (the path net/http's own error answers take) and returns its address and
// stop, which ends Run (a graceful shutdown) and returns its error; the
// test's cleanup stops it if the test did not.
func runGateway(t *testing.T, st *stack) (addr string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- st.srv.Run(ctx, ln, nil) }()
	stop = sync.OnceValue(func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			return errors.New("Run did not return within 10s of the shutdown")
		}
	})
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return ln.Addr().String(), stop
}

// postOK posts the JSON body to url with the headers hdr (name, value
// pairs) and returns the answer's body; a transport error or a status other
// than 200 fails the test.
func postOK(t *testing.T, url, body string, hdr ...string) []byte {
	t.Helper()
	r := pipenet.Do(t, http.DefaultClient, http.MethodPost, url, body, append([]string{"Content-Type", "application/json"}, hdr...)...)
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 {
		t.Fatalf("status %d: %s", r.StatusCode, b)
	}
	return b
}
