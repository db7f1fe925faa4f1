package cli

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/gateway"
)

// serveUsage is the help of llmguard serve, before its flags.
const serveUsage = `Usage: llmguard serve [--addr 127.0.0.1:8080] [--config llmguard.yaml] [--admin-addr ADDR] [--allow-origin URL]

Serves POST /v1/chat/completions, /v1/responses and /v1/embeddings (OpenAI), POST /v1/messages
(Anthropic) and GET /v1/models over the config's routes, with /healthz, /readyz, /status and /metrics. Point
clients at it:
  OPENAI_BASE_URL=http://127.0.0.1:8080/v1   ANTHROPIC_BASE_URL=http://127.0.0.1:8080
Gateway keys are read from the environment variable named by --keys-env, comma-separated; they are
optional on loopback and required on any other address (unless --insecure-no-auth). With keys, /status
and /metrics need one too; the dashboard is at /ui/. Browser pages are refused unless their origin is loopback or given with --allow-origin.

`

// runServe runs the OpenAI- and Anthropic-compatible gateway until ctx is
// done (SIGINT/SIGTERM), then shuts down gracefully.
func runServe(ctx context.Context, env *Env, args []string) int {
	fs := newFlagSet(env, "serve", serveUsage)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address of the API")
	configPath := fs.String("config", "", "configuration file (default: $LLMGUARD_CONFIG, ./llmguard.yaml, else zero config from provider keys in the environment)")
	adminAddr := fs.String("admin-addr", "", "separate listen address for /healthz, /readyz, /status and /metrics (default: on --addr)")
	keysEnv := fs.String("keys-env", "LLMGUARD_GATEWAY_KEYS", "environment variable holding the accepted gateway keys (unset or empty: no authentication)")
	maxBody := fs.Int64("max-body", gateway.DefaultMaxBodyBytes, "request body limit in bytes (413 beyond)")
	shutdown := fs.Duration("shutdown-timeout", 30*time.Second, "how long in-flight requests may run after SIGTERM")
	logs := addLogFlags(fs, "log at debug level: every engine event, each failed attempt's one-line verdict")
	insecure := fs.Bool("insecure-no-auth", false, "allow listening off loopback without gateway keys (anyone who can reach the address spends your provider credits)")
	var origins mcpOrigins
	fs.Var(&origins, "allow-origin", "also admit requests from web pages of this `origin` (e.g. https://app.example; repeatable); loopback origins are always admitted")
	logger, code, ok := logs.parse(fs, args, env)
	if !ok {
		return code
	}
	defer logs.flush()
	path := *configPath
	if path == "" {
		path = env.Getenv("LLMGUARD_CONFIG")
	}
	var keys []string
	for _, k := range strings.Split(env.Getenv(*keysEnv), ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	classify.AddSecrets(keys...)
	exposed, err := exposure(*addr, *adminAddr, len(keys), *insecure, *keysEnv)
	if err != nil {
		return fail(env, "serve", err, 2)
	}
	app, err := loadAppWith(ctx, env, path, logs.engineOptions(logger))
	if err != nil {
		return fail(env, "serve", err, 1)
	}
	defer app.Close()
	if onlySimulated(app) {
		logger.Warn("llmguard serve: no provider key in the environment: the simulated provider sim answers, every answer labelled " +
			strings.TrimSpace(SimLabel) + "; set ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY (or another provider's key) for real answers")
	}
	srv, err := gateway.New(&gateway.Options{Engine: app.Engine, Catalog: app.Catalog, Keys: keys,
		AllowedOrigins: origins, AllowedHosts: hostNames(*addr, *adminAddr),
		MaxBodyBytes: *maxBody, ShutdownTimeout: *shutdown, Logger: logger, Metrics: app.Metrics, Items: app.Items(), Tracer: app.Tracer, UI: app.UI()})
	if err != nil {
		return fail(env, "serve", err, 2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "llmguard serve: --addr: %v\n", err)
		return 1
	}
	var adminLn net.Listener
	if *adminAddr != "" {
		if adminLn, err = net.Listen("tcp", *adminAddr); err != nil {
			ln.Close()
			fmt.Fprintf(env.Stderr, "llmguard serve: --admin-addr: %v\n", err)
			return 1
		}
	}
	routes := make([]string, 0)
	for r := range app.Engine.Routes() {
		routes = append(routes, r)
	}
	slices.Sort(routes)
	auth := "no gateway key"
	if len(keys) > 0 {
		auth = fmt.Sprintf("%d gateway key(s) from $%s", len(keys), *keysEnv)
	}
	if exposed != "" {
		logger.Warn("llmguard serve: " + exposed)
	}
	fmt.Fprintf(env.Stdout, "llmguard serve listening on http://%s (routes: %s; %s)\n", ln.Addr(), strings.Join(routes, ", "), auth)
	if adminLn != nil {
		fmt.Fprintf(env.Stdout, "llmguard serve admin on http://%s\n", adminLn.Addr())
	}
	if err := srv.Run(ctx, ln, adminLn); err != nil {
		return fail(env, "serve", err, 1)
	}
	return 0
}

// exposure checks where serve listens: off loopback it needs gateway keys
// unless insecure, and then returns the warning to print at start.
// The admin address counts too: its /status shows other clients' errors.
func exposure(addr, adminAddr string, keys int, insecure bool, keysEnv string) (warn string, err error) {
	flag, at := "--addr", addr
	if !offLoopback(addr) {
		if adminAddr == "" || !offLoopback(adminAddr) {
			return "", nil
		}
		flag, at = "--admin-addr", adminAddr
	}
	if keys > 0 {
		return "", nil
	}
	if !insecure {
		return "", fmt.Errorf("%s %s is not a loopback address and no gateway key is set: anyone who can reach it "+
			"could spend your provider credits. Set $%s (comma-separated keys clients send as Authorization: Bearer <key>), "+
			"or pass --insecure-no-auth to serve it open", flag, at, keysEnv)
	}
	return fmt.Sprintf("--insecure-no-auth: listening on %s, off loopback, with no gateway key: "+
		"anyone who can reach this address can spend your provider credits", at), nil
}

// offLoopback reports whether a listener on addr (host:port) would be
// reachable from other machines: an empty host (every interface), or a host
// that is or resolves to a non-loopback address. An address that does not
// parse or resolve is not (listening on it fails and says why).
func offLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "" {
		return true
	}
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip := net.ParseIP(host)
	if ip == nil {
		ta, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			return false
		}
		ip = ta.IP
	}
	return ip == nil || !ip.IsLoopback()
}

// hostNames lists the listen addresses' host names that are not IPs
// (admitted as Host headers besides loopback ones).
func hostNames(addrs ...string) []string {
	var out []string
	for _, a := range addrs {
		if h, _, err := net.SplitHostPort(a); err == nil && h != "" && net.ParseIP(h) == nil {
			out = append(out, h)
		}
	}
	return out
}
