package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmguard/llmguard/alert"
	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/internal/version"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/openai"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/redisstore"
	"github.com/llmguard/llmguard/telemetry"
	"github.com/llmguard/llmguard/web"
)

// App is what serve, mcp and demo run on: the loaded configuration, one
// adapter per provider and the engine over them.
type App struct {
	Config *config.Config
	// Catalog is what Config says of its providers and models.
	Catalog  *catalog.Catalog
	Engine   *resilience.Engine
	Adapters map[string]provider.Adapter
	// Alerts is the webhook notifier fed by the engine's events, nil when
	// alerts.webhook_url is not set.
	Alerts *alert.Notifier
	// Metrics counts the engine's events (and the requests of the edge that
	// reports to it), served at /metrics.
	Metrics *telemetry.Metrics
	// Live keeps the dashboard's latencies and timeline, fed the engine's
	// events.
	Live *web.Live
	// State is the store replicas share (state.backend: redis), nil for
	// the memory backend.
	State *redisstore.Store
	// Tracer traces requests when OTEL_EXPORTER_OTLP_ENDPOINT is set (nil:
	// no tracing); the adapters' HTTP client propagates its trace context.
	Tracer  *telemetry.Tracer
	closers []func()
}

// Close releases what the App started (the simulated provider's listener)
// and delivers the alerts still queued (for at most 5s).
func (a *App) Close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

// loadApp loads the configuration (configPath, else $LLMGUARD_CONFIG, else
// llmguard.yaml, else zero config from the environment), builds the adapters
// and the engine. Engine events are logged at debug level to logger.
func loadApp(ctx context.Context, env *Env, configPath string) (*App, error) {
	return loadAppWith(ctx, env, configPath, nil)
}

// loadAppWith is loadApp with extra engine options (event hooks, logger).
func loadAppWith(ctx context.Context, env *Env, configPath string, opts *resilience.Options) (*App, error) {
	var cfg *config.Config
	var err error
	if configPath != "" {
		cfg, err = config.Load(configPath, env.Getenv)
	} else {
		cfg, err = config.LoadDefault(env.Getenv)
	}
	if err != nil {
		return nil, err
	}
	app := &App{Config: cfg, Catalog: cfg.Catalog(), Adapters: map[string]provider.Adapter{}}
	tracer, shutdown, err := telemetry.TracingFromEnv(ctx, env.Getenv, version.Get().Short())
	if err != nil {
		return nil, err
	}
	app.Tracer = tracer
	app.closers = append(app.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = shutdown(ctx)
	})
	client := provider.NewHTTPClient(cfg.Transport()) // pools sized by the targets' max_idle_conns
	client.Transport = tracer.Transport(client.Transport)
	real := cfg.ProviderSettings()
	for name, p := range cfg.Providers {
		if info, ok := p.Info(); ok && info.Dialect == catalog.DialectSim {
			a, closeSim, err := startSim(name, p)
			if err != nil {
				app.Close()
				return nil, err
			}
			app.closers = append(app.closers, closeSim)
			app.Adapters[name] = a
			delete(real, name)
		}
	}
	adapters, err := registry.Build(real, client)
	if err != nil {
		app.Close()
		return nil, err
	}
	for n, a := range adapters {
		app.Adapters[n] = a
	}
	// Adapters the caller brings (mcp: the client's own model for the
	// mcp/sampling target) join the configured ones.
	if opts != nil {
		for n, a := range opts.Adapters {
			app.Adapters[n] = a
		}
	}
	if _, ok := app.Adapters[catalog.SamplingProvider]; !ok {
		dropSampling(cfg)
	}
	o := cfg.EngineOptions()
	if opts != nil {
		o.Rand, o.OnEvent, o.Logger, o.Store = opts.Rand, opts.OnEvent, opts.Logger, opts.Store
	}
	o.Adapters = app.Adapters
	app.Metrics = newMetrics(app, o)
	if u := cfg.Alerts.WebhookURL; u != "" {
		n, err := alert.New(&alert.Options{WebhookURL: u, Logger: o.Logger})
		if err != nil {
			app.Close()
			return nil, fmt.Errorf("alerts.webhook_url: %w", err)
		}
		app.Alerts = n
		app.closers = append(app.closers, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			n.Close(ctx)
		})
		if prev := o.OnEvent; prev != nil {
			o.OnEvent = func(e resilience.Event) { prev(e); n.Event(e) }
		} else {
			o.OnEvent = n.Event
		}
	}
	if ro := cfg.State.RedisOptions(); ro != nil && o.Store == nil {
		ro.Logger = o.Logger
		st, err := redisstore.New(ctx, ro)
		if err != nil {
			app.Close()
			return nil, fmt.Errorf("state.redis_url: %w", err)
		}
		app.State, o.Store, o.Results, o.Leases = st, st, st, st
		app.closers = append(app.closers, st.Close)
		stateMetrics(app.Metrics.Registry(), st)
		logger := o.Logger
		if logger == nil {
			logger = slog.Default()
		}
		logger.Info(fmt.Sprintf("state: redis at %s (fallback: local)", st.Addr()))
	}
	eng, err := resilience.New(o)
	if err != nil {
		app.Close()
		return nil, err
	}
	app.Engine = eng
	return app, nil
}

// Items is where the gateway keeps its Responses items: the shared store
// with state.backend redis, else nil (the gateway's own, in memory).
func (a *App) Items() state.ItemStore {
	if a.State == nil {
		return nil
	}
	return a.State
}

// SimLabel starts every answer of the simulated provider, so it is never
// passed off as a real model's.
const SimLabel = "[simulated: no provider key is set] "

// startSim serves the embedded simulated provider: the mock, healthy, on a
// loopback listener of its own, spoken to in the OpenAI dialect.
func startSim(name string, p *config.Provider) (provider.Adapter, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("simulated provider: %w", err)
	}
	m := mock.New(&mock.Config{AllowNoKey: true})
	srv := &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	model := p.Model
	if model == "" {
		model = "sim-1"
	}
	slog.Debug("simulated provider started (no provider key set)", "provider", name, "addr", ln.Addr().String())
	a := openai.New(&openai.Config{Name: name, BaseURL: "http://" + ln.Addr().String() + "/v1", APIKey: "sim", Model: model,
		Client: provider.NewHTTPClient(nil)})
	stop := func() {
		m.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}
	return simAdapter{a}, stop, nil
}

// simAdapter labels every answer of the simulated provider.
type simAdapter struct{ provider.Adapter }

func (s simAdapter) Chat(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	resp, err := s.Adapter.Chat(ctx, req)
	if err == nil && !strings.HasPrefix(resp.Text, SimLabel) {
		resp.Text = SimLabel + resp.Text
	}
	return resp, err
}

func (s simAdapter) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	st, err := s.Adapter.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	return &simStream{Stream: st}, nil
}

type simStream struct {
	provider.Stream
	labelled bool
}

func (s *simStream) Recv() (provider.Chunk, error) {
	c, err := s.Stream.Recv()
	if err == nil && !s.labelled && c.Text != "" {
		c.Text = SimLabel + c.Text
		s.labelled = true
	}
	return c, err
}

// dropSampling removes the mcp/sampling target from every route: outside
// `llmguard mcp` there is no MCP client to ask, and the caller must see the
// real providers' failure, not a placeholder's.
func dropSampling(cfg *config.Config) {
	for _, r := range cfg.Routes {
		kept := r.Targets[:0]
		for _, t := range r.Targets {
			if t.Target != catalog.SamplingTarget {
				kept = append(kept, t)
			}
		}
		r.Targets = kept
	}
}

// stateMetrics registers the shared store's counters on reg: calls served
// locally, outages, and whether it shares now (read at scrape time).
func stateMetrics(reg *prometheus.Registry, st *redisstore.Store) {
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "llmguard_state_local_total",
			Help: "Calls to the shared state store served from local state (Redis away, or slower than state.timeout)."},
			func() float64 { return float64(st.Status().Fallbacks) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "llmguard_state_outages_total",
			Help: "Times the shared state store stopped answering."},
			func() float64 { return float64(st.Status().Outages) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "llmguard_state_shared",
			Help: "1 while the shared state store answers, 0 while calls are served from local state."},
			func() float64 {
				if st.Status().Shared {
					return 1
				}
				return 0
			}),
	)
}

// newMetrics returns the app's metrics over the routes of o, and chains
// them to o's event hook. The breaker gauges read app.Engine at scrape time.
func newMetrics(app *App, o *resilience.Options) *telemetry.Metrics {
	routes := make(map[string][]string, len(o.Routes))
	for name, r := range o.Routes {
		for _, t := range r.Targets {
			routes[name] = append(routes[name], t.Name)
		}
	}
	app.Live = web.NewLive(routes)
	m := telemetry.New(&telemetry.Options{Routes: routes, Catalog: app.Catalog, Runtime: true,
		Status: func() []resilience.TargetStatus {
			if app.Engine == nil {
				return nil
			}
			return app.Engine.Status()
		}})
	if prev := o.OnEvent; prev != nil {
		o.OnEvent = func(e resilience.Event) { prev(e); m.Event(e); app.Live.Event(e) }
	} else {
		o.OnEvent = func(e resilience.Event) { m.Event(e); app.Live.Event(e) }
	}
	return m
}

// UI returns the dashboard's handler over the app's engine (nil when the
// app has no engine).
func (a *App) UI() http.Handler {
	if a == nil || a.Engine == nil {
		return nil
	}
	return web.Handler(&web.Options{Live: a.Live, Status: a.Engine.Status, Routes: a.Engine.Routes(), Metrics: a.Metrics})
}
