package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/internal/httpguard"
	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
	"github.com/llmguard/llmguard/telemetry"
)

// Engine is what the gateway needs of *resilience.Engine (which implements
// it). Implementations must be safe for concurrent use.
type Engine interface {
	// Chat runs a non-streaming call over its route.
	Chat(ctx context.Context, c *resilience.Call) (*resilience.Result, error)
	// Stream runs a streaming call and returns once the first token arrived.
	Stream(ctx context.Context, c *resilience.Call) (*resilience.StreamResult, error)
	// Status snapshots every target (for /status).
	Status() []resilience.TargetStatus
	// Routes maps each route name to its "provider/model" targets.
	Routes() map[string][]string
}

// DefaultMaxBodyBytes is the default request body limit (10 MiB).
const DefaultMaxBodyBytes = 10 << 20

// Options configures a Server. Engine is required; every other zero value
// means the documented default.
type Options struct {
	// Engine runs the calls.
	Engine Engine
	// Catalog names the configured providers and their types (which
	// provider/model names exist, which providers relay Responses API
	// bodies), the default provider of bare model names, and the models'
	// facts (which targets accept an assistant prefill). Nil means no
	// configured provider beyond the engine's routes, and the built-in
	// model table.
	Catalog *catalog.Catalog
	// Keys are the accepted gateway keys, sent as "Authorization: Bearer
	// <key>" or "x-api-key: <key>" (nil or empty = no authentication).
	Keys []string
	// AllowedOrigins are browser origins ("https://app.example") admitted
	// besides loopback ones; a request from any other page is refused.
	AllowedOrigins []string
	// AllowedHosts are Host names admitted besides loopback ones on a
	// loopback listener (against DNS rebinding).
	AllowedHosts []string
	// MaxBodyBytes bounds a request body (0 = DefaultMaxBodyBytes); larger
	// bodies get 413.
	MaxBodyBytes int64
	// ReadHeaderTimeout bounds reading a request's headers (0 = 10s).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included (0 = 60s).
	ReadTimeout time.Duration
	// IdleTimeout closes idle keep-alive connections (0 = 120s).
	IdleTimeout time.Duration
	// ShutdownTimeout bounds the wait for in-flight requests on shutdown
	// (0 = 30s); connections still open after it are closed.
	ShutdownTimeout time.Duration
	// StreamIdleTimeout ends a stream whose upstream sent nothing for this
	// long, as a last guard behind the engine's own idle timeout
	// (0 = 2 minutes).
	StreamIdleTimeout time.Duration
	// Now is the clock (nil = time.Now).
	Now func() time.Time
	// Logger receives request failures (nil = slog.Default()).
	Logger *slog.Logger
	// Metrics, when set, counts every API request (route, answering target,
	// dialect, outcome, latency, tokens, cost) and is served at /metrics
	// beside /status, under the same access policy (nil = no /metrics).
	// Feed the engine's events to it too (resilience.Options.OnEvent).
	Metrics *telemetry.Metrics
	// Tracer, when set, traces every API request: a span per request and a
	// child per upstream attempt, continuing the caller's traceparent (nil
	// = no tracing).
	Tracer *telemetry.Tracer
	// UI, when set, is the dashboard (web.Handler), served at /ui/ beside
	// /status: its page to anyone the access policy admits, its live data
	// (/ui/events, /ui/snapshot) only with the gateway key when there are
	// keys (nil = no /ui).
	UI http.Handler
	// Items keeps the output items of translated Responses API answers, so
	// that a later request's item_reference can name them (nil = an
	// in-process memstore.Items with its default bounds).
	Items state.ItemStore
}

// Server is the OpenAI- and Anthropic-compatible gateway. Create it with New;
// it is safe for concurrent use. The zero value is not usable.
type Server struct {
	eng      Engine
	cat      *catalog.Catalog
	guard    *httpguard.Guard
	maxBody  int64
	opts     Options
	now      func() time.Time
	log      *slog.Logger
	draining atomic.Bool
	bufs     sync.Pool // *[]byte, at most maxPooled (putBuf)
	reclaim  *reclaimer
	routes   map[string][]string
	items    state.ItemStore
	metrics  *telemetry.Metrics
	tracer   *telemetry.Tracer
}

// New returns a Server. It does not listen; use Handler, AdminHandler or Run.
// It reads the engine's routes once.
func New(opts *Options) (*Server, error) {
	if opts == nil || opts.Engine == nil {
		return nil, errors.New("gateway: Options.Engine is required")
	}
	s := &Server{eng: opts.Engine, cat: opts.Catalog, opts: *opts, now: opts.Now, log: opts.Logger,
		maxBody: opts.MaxBodyBytes, items: opts.Items, metrics: opts.Metrics,
		tracer: opts.Tracer}
	g, err := httpguard.New(&httpguard.Policy{Keys: opts.Keys, AllowedOrigins: opts.AllowedOrigins,
		AllowedHosts: opts.AllowedHosts, KeyName: "gateway key"})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	s.guard = g
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.items == nil {
		s.items = memstore.NewItems(nil)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&s.opts.ReadHeaderTimeout, 10*time.Second)
	def(&s.opts.ReadTimeout, 60*time.Second)
	def(&s.opts.IdleTimeout, 120*time.Second)
	def(&s.opts.ShutdownTimeout, 30*time.Second)
	def(&s.opts.StreamIdleTimeout, 2*time.Minute)
	s.bufs.New = func() any { b := make([]byte, 0, 8<<10); return &b }
	s.reclaim = newReclaimer()
	s.routes = s.eng.Routes() // fixed for the engine's life: read once
	return s, nil
}

// Handler returns the API handler: POST /v1/chat/completions, POST
// /v1/messages, GET /v1/models (and /v1/models/{id}), plus the admin
// endpoints (/healthz, /readyz, /status) on the same listener. Any other
// path or method gets a JSON 404 or 405 in the path's dialect.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v1/chat/completions", s.api(DialectOpenAI, s.serveChat))
	mux.Handle("/v1/messages", s.api(DialectAnthropic, s.serveChat))
	mux.Handle("/v1/messages/count_tokens", s.api(DialectAnthropic, s.serveCountTokens))
	mux.Handle("/v1/responses", s.api(DialectResponses, s.serveResponses))
	mux.Handle("/v1/embeddings", s.api(DialectOpenAI, s.serveEmbeddings))
	mux.Handle("/v1/models", s.api(DialectOpenAI, s.serveModels))
	mux.Handle("/v1/models/", s.api(DialectOpenAI, s.serveModel))
	s.admin(mux)
	mux.HandleFunc("/", s.notFound)
	return s.cleanPaths(mux)
}

// AdminHandler returns only the admin endpoints, for a separate listener.
func (s *Server) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	s.admin(mux)
	mux.HandleFunc("/", s.notFound)
	return s.cleanPaths(mux)
}

// Run serves the API on ln (and the admin endpoints on adminLn when it is
// not nil, else on ln) until ctx is done, then shuts down gracefully:
// /readyz turns 503, listeners close, and in-flight requests (streams
// included) get ShutdownTimeout to finish. It returns nil after a clean
// shutdown.
func (s *Server) Run(ctx context.Context, ln, adminLn net.Listener) error {
	mk := func(h http.Handler) *http.Server {
		return &http.Server{Handler: h, ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
			ReadTimeout: s.opts.ReadTimeout, IdleTimeout: s.opts.IdleTimeout,
			ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
			BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	}
	servers := []*http.Server{mk(s.Handler())}
	lns := []net.Listener{jsonErrors(ln)}
	if adminLn != nil {
		servers = append(servers, mk(s.AdminHandler()))
		lns = append(lns, jsonErrors(adminLn))
	}
	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { errc <- srv.Serve(lns[i]) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	s.draining.Store(true)
	s.log.Info("gateway: shutting down, finishing in-flight requests", "timeout", s.opts.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	for _, srv := range servers {
		if e := srv.Shutdown(sctx); e != nil {
			_ = srv.Close()
			if err == nil {
				err = fmt.Errorf("gateway: shutdown: %w", e)
			}
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
