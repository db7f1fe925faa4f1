package overhead

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/gateway"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/telemetry"
	"github.com/llmguard/llmguard/web"
)

// This file: the three paths to one upstream, each on a loopback listener
// of its own — the upstream itself (the calibration), a plain
// httputil.ReverseProxy in front of it, and the gateway in front of it,
// built as llmguard serve builds it (the last two in child processes: see
// child.go).

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

// stack is an upstream in this process, the proxy and the gateway in
// front of it, each in a child process, and the client that calls all
// three.
type stack struct {
	base     [npaths]string // base URL of each path
	upstream *listener      // counts the connections the path under test opened to the upstream
	gate     gate           // holds the upstream's requests during warm-up (fill)
	children [npaths]*child // proxy's and gateway's
	client   *http.Client
	closers  []func()
}

// firstLine keeps the first line written to it (a child's stderr, to
// explain a failure).
type firstLine struct {
	mu   sync.Mutex
	line string
}

func (f *firstLine) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.line == "" {
		f.line, _, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
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

// chunkCounts are the stream lengths the upstream serves at
// /chunks/N/v1/chat/completions, and the gateway routes as chunks-N.
var chunkCounts = []int{10, 100, 1000}

// gatewayConfig routes "default" to the OpenAI dialect and "claude" to the
// Anthropic one, both at the mock at base, and "chunks-N" to the upstream's
// streams of N chunks.
func gatewayConfig(base string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "providers:\n  openai: {base_url: \"%[1]s/v1\", api_key: bench-key}\n  anthropic: {base_url: \"%[1]s\", api_key: bench-key}\n", base)
	for _, n := range chunkCounts {
		fmt.Fprintf(&b, "  chunks%[2]d: {type: openai-compatible, base_url: \"%[1]s/chunks/%[2]d/v1\", api_key: bench-key}\n", base, n)
	}
	b.WriteString("routes:\n  default:\n    targets: [openai/gpt-4o]\n  claude:\n    targets: [anthropic/claude-sonnet-4-5]\n")
	for _, n := range chunkCounts {
		fmt.Fprintf(&b, "  chunks-%[1]d:\n    targets: [chunks%[1]d/gpt-4o]\n", n)
	}
	return []byte(b.String())
}

// upstream is what every path calls: the healthy mock, and the streams of
// N chunks under /chunks/N/.
func upstream() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", mock.New(&mock.Config{MaxRequests: 100}))
	for _, n := range chunkCounts {
		mux.Handle(fmt.Sprintf("/chunks/%d/", n), chunked(n))
	}
	return mux
}

// newStack serves the upstream here and starts the proxy and the gateway
// in front of it, each a child started by start.
func newStack(start Spawn) (st *stack, err error) {
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
	srv := &http.Server{Handler: st.gate.hold(upstream()), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(up) }()
	st.closers = append(st.closers, func() { srv.Close() })
	for _, p := range []path{proxy, guard} {
		c, err := spawn(start, p, st.base[direct])
		if err != nil {
			return nil, err
		}
		st.children[p], st.base[p] = c, c.base
		st.closers = append(st.closers, c.close)
	}
	st.client = &http.Client{Transport: &http.Transport{
		MaxIdleConns: 4 * maxInFlight, MaxIdleConnsPerHost: maxInFlight, IdleConnTimeout: time.Minute,
	}}
	st.closers = append(st.closers, st.client.CloseIdleConnections)
	return st, nil
}

// counters reads what p has spent: this process's counters for the
// calibration (the client and the upstream), the child's otherwise. gc
// collects garbage first, so one phase's garbage is not collected on the
// next one's account.
func (st *stack) counters(p path, gc bool) (counters, error) {
	if c := st.children[p]; c != nil {
		return c.read(gc)
	}
	if gc {
		runtime.GC()
	}
	return read(), nil
}

// close stops the servers and the children, the client's connections last.
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
	cfg, err := config.Parse("bench.yaml", gatewayConfig(base), nil)
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
