package overhead

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/gateway"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/telemetry"
	"github.com/llmguard/llmguard/web"
)

// This file: the three paths to one upstream, each on a loopback listener
// of its own — the upstream itself (the calibration), a plain
// httputil.ReverseProxy in front of it, and the gateway in front of it,
// built as llmguard serve builds it.

// path is one way to the upstream.
type path int

const (
	direct path = iota // the client calls the upstream: the calibration
	proxy              // through httputil.ReverseProxy
	guard              // through llmguard's gateway
	npaths
)

// pathNames label the paths in reports.
var pathNames = [npaths]string{"mock (calibration)", "httputil.ReverseProxy", "llmguard"}

// listener counts the connections it accepts.
type listener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// loopback listens on 127.0.0.1, the only address a bench ever targets.
func loopback() (*listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	return &listener{Listener: ln}, nil
}

// stack is an upstream and the proxy and the gateway in front of it, and
// the client that calls all three.
type stack struct {
	base     [npaths]string // base URL of each path
	upstream *listener      // counts the connections the path under test opened to the upstream
	client   *http.Client
	proxyLog firstLine // the proxy's first error, to explain a failure
	closers  []func()
}

// firstLine keeps the first line written to it.
type firstLine struct {
	mu   sync.Mutex
	line string
}

func (f *firstLine) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.line == "" {
		f.line = strings.TrimSpace(string(b))
	}
	return len(b), nil
}

func (f *firstLine) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.line
}

// quiet formats its records (as llmguard serve's logger does, so the
// access log's cost is measured) and writes them nowhere.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// gatewayYAML routes "default" to the OpenAI dialect and "claude" to the
// Anthropic one, both at the upstream; %[1]s is its base URL.
const gatewayYAML = `providers:
  openai: {base_url: "%[1]s/v1", api_key: bench-key}
  anthropic: {base_url: "%[1]s", api_key: bench-key}
routes:
  default:
    targets: [openai/gpt-4o]
  claude:
    targets: [anthropic/claude-sonnet-4-5]
`

// newStack serves upstream and puts the proxy and the gateway in front of it.
func newStack(upstream http.Handler) (st *stack, err error) {
	st = &stack{}
	defer func() {
		if err != nil {
			st.close()
		}
	}()
	up, err := loopback()
	if err != nil {
		return nil, err
	}
	st.upstream = up
	st.base[direct] = "http://" + up.Addr().String()
	st.serve(up, upstream)

	u, _ := url.Parse(st.base[direct])
	rp := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(u) },
		Transport: proxyTransport(),
		ErrorLog:  log.New(&st.proxyLog, "", 0),
	}
	pl, err := loopback()
	if err != nil {
		return nil, err
	}
	st.base[proxy] = "http://" + pl.Addr().String()
	st.serve(pl, rp)

	gw, err := newGateway(st.base[direct])
	if err != nil {
		return nil, err
	}
	gl, err := loopback()
	if err != nil {
		return nil, err
	}
	st.base[guard] = "http://" + gl.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gw.Run(ctx, gl, nil)
	}()
	st.closers = append(st.closers, func() { cancel(); <-done })

	st.client = &http.Client{Transport: &http.Transport{
		MaxIdleConns: 4 * maxInFlight, MaxIdleConnsPerHost: maxInFlight, IdleConnTimeout: time.Minute,
	}}
	st.closers = append(st.closers, st.client.CloseIdleConnections)
	return st, nil
}

// serve serves h on ln until the stack closes.
func (st *stack) serve(ln net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			quiet.Error("bench server", "err", err)
		}
	}()
	st.closers = append(st.closers, func() { srv.Close() })
}

// close stops the servers, the client's connections last.
func (st *stack) close() {
	for i := len(st.closers) - 1; i >= 0; i-- {
		st.closers[i]()
	}
	st.closers = nil
}

// proxyTransport is what a plain reverse proxy would be deployed with:
// net/http's defaults with a connection pool as large as the load.
func proxyTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 4*maxInFlight, maxInFlight
	return t
}

// newGateway builds the gateway over the upstream at base as llmguard
// serve does with a config file: adapters on the shared transport, the
// engine with the config's defaults, metrics and the dashboard's live feed
// fed the engine's events, and an access log at info level.
func newGateway(base string) (*gateway.Server, error) {
	cfg, err := config.Parse("bench.yaml", fmt.Appendf(nil, gatewayYAML, base), nil)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return nil, err
	}
	adapters, err := registry.Build(cfg.ProviderSettings(), provider.NewHTTPClient(nil))
	if err != nil {
		return nil, err
	}
	o := cfg.EngineOptions()
	routes := map[string][]string{}
	for name, r := range o.Routes {
		for _, t := range r.Targets {
			routes[name] = append(routes[name], t.Name)
		}
	}
	var eng *resilience.Engine
	metrics := telemetry.New(&telemetry.Options{Routes: routes, Catalog: cfg.Catalog(), Runtime: true,
		Status: func() []resilience.TargetStatus { return eng.Status() }})
	live := web.NewLive(routes)
	o.Adapters, o.Logger = adapters, quiet
	o.OnEvent = func(e resilience.Event) { metrics.Event(e); live.Event(e) }
	if eng, err = resilience.New(o); err != nil {
		return nil, err
	}
	return gateway.New(&gateway.Options{Engine: eng, Catalog: cfg.Catalog(), Logger: quiet, Metrics: metrics,
		ShutdownTimeout: time.Second})
}
