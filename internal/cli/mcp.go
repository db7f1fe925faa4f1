package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/gateway"
	"github.com/llmguard/llmguard/internal/httpguard"
	"github.com/llmguard/llmguard/internal/version"
	"github.com/llmguard/llmguard/mcpproxy"
	"github.com/llmguard/llmguard/mcpserver"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// useApp gives the MCP tools app's engine, metrics, tracer, model
// resolution and per-route cache TTLs, and the config's tool timeout unless
// --tool-timeout was given.
func useApp(cfg *mcpserver.Config, app *App, toolTimeoutFlag bool) {
	cfg.Engine = app.Engine
	cfg.Metrics = app.Metrics
	cfg.Tracer = app.Tracer
	if t := app.Config.MCP.ToolTimeout; t > 0 && !toolTimeoutFlag {
		cfg.ToolTimeout = t
	}
	routes := app.Engine.Routes()
	cfg.Resolve = func(name string) (string, error) { return app.Catalog.ResolveModel(name, routes) }
	cfg.RouteCacheTTL = func(route string) time.Duration {
		if r := app.Config.Routes[route]; r != nil {
			return r.Cache.TTL
		}
		return 0
	}
}

// mcpUsage is the help of llmguard mcp, before its flags.
const mcpUsage = `Usage: llmguard mcp [--http 127.0.0.1:8765] [--token T] [--tool-timeout 50s] [--allow-files] [--upstream 'name=command args']... [--config FILE] [-v]

Serves the MCP tools summarize, ask, chat, batch_summarize, decode_error and llm_status on stdio,
or on Streamable HTTP with --http, and the tools of each --upstream MCP server
(and of mcp_upstreams in the config), guarded. Register it with:
  claude mcp add llmguard -e ANTHROPIC_API_KEY=sk-ant-... -- llmguard mcp

Flags:
`

// runMCP serves llmguard's MCP tools over stdio (the default) or Streamable
// HTTP (--http). In stdio mode stdout carries only JSON-RPC: every log line
// goes to stderr.
func runMCP(ctx context.Context, env *Env, args []string) int {
	fs := newFlagSet(env, "mcp", mcpUsage)
	httpAddr := fs.String("http", "", "serve Streamable HTTP on `addr` (e.g. 127.0.0.1:8765; \":8765\" binds loopback) instead of stdio")
	token := fs.String("token", "", "bearer `token` HTTP clients must send (default $LLMGUARD_MCP_TOKEN)")
	toolTimeout := fs.Duration("tool-timeout", mcpserver.DefaultToolTimeout, "deadline of each tool call; keep it below the client's own tool timeout")
	allowFiles := fs.Bool("allow-files", false, "let batch_summarize read a JSON Lines file by path and write its results beside it")
	configPath := fs.String("config", "", "config `file` (default: $LLMGUARD_CONFIG, else zero config from provider keys in the environment)")
	logs := addLogFlags(fs, "verbose (debug) logs on stderr: every engine event, each failed attempt's one-line verdict")
	metricsAddr := fs.String("metrics-addr", "", "in stdio mode, also serve /metrics on `addr` (e.g. 127.0.0.1:9464; with --http it is served there)")
	var origins mcpOrigins
	var upstreams mcpUpstreams
	fs.Var(&upstreams, "upstream", "also serve the tools of this MCP `server`, guarded: 'name=command args' (stdio) or name=https://host/mcp (repeatable)")
	fs.Var(&origins, "allow-origin", "also admit HTTP requests from this browser `origin` (repeatable); loopback origins are always admitted")
	// stdout is the JSON-RPC channel in stdio mode: logs only ever go to stderr.
	logger, code, ok := logs.parse(fs, args, env)
	if !ok {
		return code
	}
	defer logs.flush()

	cfg := &mcpserver.Config{Logger: logger, ToolTimeout: *toolTimeout, Version: version.Get().Short(),
		AllowFiles: *allowFiles, BatchCodec: gateway.Codec{}}
	// A route may end with "mcp/sampling": the connected client's own model.
	opts := logs.engineOptions(logger)
	opts.Adapters = map[string]provider.Adapter{mcpserver.SamplingProvider: &mcpserver.SamplingAdapter{}}
	app, err := loadAppWith(ctx, env, *configPath, opts)
	switch {
	case err != nil:
		// The server still starts and lists its tools; each LLM tool then
		// answers one line saying what to fix.
		logger.Warn("llmguard mcp: no usable LLM provider; tools will say how to configure one", "error", err)
		cfg.ConfigError = err.Error()
	case onlySimulated(app):
		// Zero config found no key. An agent must not take a simulated answer
		// for a real one: the LLM tools say which variables to set instead.
		defer app.Close()
		logger.Warn("llmguard mcp: no provider key in the environment; the LLM tools will say which variables to set")
	default:
		defer app.Close()
		useApp(cfg, app, flagSet(fs, "tool-timeout"))
	}
	srv := mcpserver.New(cfg)
	var fromConfig []mcpproxy.Upstream
	if app != nil {
		fromConfig = app.Config.Upstreams()
	}
	px, err := startProxy(ctx, srv, upstreams.merge(fromConfig), cfg.ToolTimeout, sharedResults(app), logger)
	if err != nil {
		return fail(env, "mcp", err, 2)
	}
	if px != nil {
		defer px.Close()
	}

	var extra map[string]http.Handler
	if app != nil {
		extra = map[string]http.Handler{"GET /metrics": app.Metrics.Handler()}
		if ui := app.UI(); ui != nil {
			extra["GET /ui"], extra["GET /ui/"] = ui, ui
		}
	}
	if *token == "" {
		*token = env.Getenv("LLMGUARD_MCP_TOKEN")
	}
	classify.AddSecrets(*token)
	if *httpAddr == "" {
		if *metricsAddr != "" {
			url, stop, err := serveSide(ctx, *metricsAddr, *token, extra, logger)
			if err != nil {
				fmt.Fprintf(env.Stderr, "llmguard mcp: --metrics-addr: %v\n", err)
				return 2
			}
			defer stop()
			logger.Info("llmguard mcp: serving /metrics", "url", url+"/metrics")
		}
		t := &mcp.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: mcpStdout{env.Stdout}}
		if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
			logger.Error("llmguard mcp: session ended", "error", err)
			return 1
		}
		return 0
	}

	addr := *httpAddr
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		addr = net.JoinHostPort("127.0.0.1", port) // loopback unless told otherwise
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "llmguard mcp: --http %s: %v\n", *httpAddr, err)
		return 1
	}
	if !httpguard.IsLoopback(ln.Addr()) && *token == "" {
		ln.Close()
		fmt.Fprintf(env.Stderr, "llmguard mcp: --http %s is not a loopback address: set --token or LLMGUARD_MCP_TOKEN so strangers can't spend your credits\n", *httpAddr)
		return 2
	}
	h, err := mcpserver.HTTPHandler(srv, &mcpserver.HTTPOptions{Token: *token, AllowedOrigins: origins,
		AllowedHosts: hostNames(*httpAddr), Logger: logger, Handlers: extra})
	if err != nil {
		ln.Close()
		fmt.Fprintf(env.Stderr, "llmguard mcp: --allow-origin: %v\n", err)
		return 2
	}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("llmguard mcp: serving Streamable HTTP", "url", "http://"+ln.Addr().String()+"/", "token", *token != "")
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fail(env, "mcp", err, 1)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
		return 0
	}
}

// onlySimulated reports whether every provider of app is the simulated one.
func onlySimulated(app *App) bool {
	for _, p := range app.Config.Providers {
		if info, ok := p.Info(); !ok || info.Dialect != catalog.DialectSim {
			return false
		}
	}
	return true
}

// sharedResults is the result store replicas share (state.backend:
// redis), nil when there is none.
func sharedResults(app *App) state.ResultStore {
	if app == nil || app.State == nil {
		return nil
	}
	return app.State
}

// startProxy starts the proxy of ups on srv (nil when there are none).
// With state.backend redis, results and the calls in flight are shared with
// the other replicas.
func startProxy(ctx context.Context, srv *mcp.Server, ups []mcpproxy.Upstream, toolTimeout time.Duration, results state.ResultStore, logger *slog.Logger) (*mcpproxy.Proxy, error) {
	if len(ups) == 0 {
		return nil, nil
	}
	for _, u := range ups {
		for _, v := range u.Headers {
			classify.AddSecrets(v)
		}
	}
	px, err := mcpproxy.New(&mcpproxy.Config{Upstreams: ups, ToolTimeout: toolTimeout, Results: results, Logger: logger})
	if err != nil {
		return nil, errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	px.Start(ctx, srv)
	return px, nil
}

// mcpUpstreams collects the --upstream flags.
type mcpUpstreams []mcpproxy.Upstream

func (s *mcpUpstreams) String() string { return "" }
func (s *mcpUpstreams) Set(v string) error {
	u, err := mcpproxy.ParseUpstream(v)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "--upstream "))
	}
	*s = append(*s, u)
	return nil
}

// merge returns the config's upstreams with the flags' added; a flag
// replaces the config's server of its name.
func (s mcpUpstreams) merge(fromConfig []mcpproxy.Upstream) []mcpproxy.Upstream {
	out := make([]mcpproxy.Upstream, 0, len(fromConfig)+len(s))
	for _, u := range fromConfig {
		if !slices.ContainsFunc(s, func(f mcpproxy.Upstream) bool { return f.Name == u.Name }) {
			out = append(out, u)
		}
	}
	return append(out, s...)
}

type mcpStdout struct{ io.Writer }

func (mcpStdout) Close() error { return nil }

type mcpOrigins []string

func (s *mcpOrigins) String() string     { return strings.Join(*s, ",") }
func (s *mcpOrigins) Set(v string) error { *s = append(*s, v); return nil }

// flagSet reports whether the flag called name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// serveSide serves handlers (metrics, the dashboard) on addr beside MCP on
// stdio, behind the gateway's access policy: loopback unless a token is
// set, and then the token. url is where it listens (http://host:port);
// stop shuts it down.
func serveSide(ctx context.Context, addr, token string, handlers map[string]http.Handler, logger *slog.Logger) (url string, stop func(), err error) {
	p := &httpguard.Policy{AllowedHosts: hostNames(addr), KeyName: "MCP token"}
	if token != "" {
		p.Keys = []string{token}
	}
	g, err := httpguard.New(p)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	if !httpguard.IsLoopback(ln.Addr()) && token == "" {
		ln.Close()
		return "", nil, fmt.Errorf("%s is not a loopback address: set --token or LLMGUARD_MCP_TOKEN", addr)
	}
	mux := http.NewServeMux()
	for pattern, h := range handlers {
		mux.Handle(pattern, h)
	}
	hs := &http.Server{ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ref := g.Check(r); ref != nil {
				http.Error(w, ref.Message, ref.Status)
				return
			}
			mux.ServeHTTP(w, r)
		})}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String(), func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}, nil
}
