package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/llmguard/llmguard/mock"
)

// mockUsage is the help of llmguard mock, before its flags.
const mockUsage = `Usage: llmguard mock [--addr 127.0.0.1:8089] [--scenario NAME|FILE] [--seed N] [--rate-limit N/DURATION] [--quiet] [--list] [--allow-remote]

Serves the Anthropic, OpenAI(-compatible), Azure and Gemini APIs with realistic answers and scripted faults.
Per request: header X-Mock-Fault: 529,529,200 or model "NAME+fault=529,529,200". Request log: GET /_mock/requests.

`

// runMock serves the fault-injecting fake upstream until ctx is done.
func runMock(ctx context.Context, env *Env, args []string) int {
	fs := newFlagSet(env, "mock", mockUsage)
	addr := fs.String("addr", "127.0.0.1:8089", "listen address")
	scenario := fs.String("scenario", "healthy", "built-in scenario name (see --list) or a scenario file (YAML or JSON)")
	seed := fs.Uint64("seed", 0, "random seed for fault rates and latency (0: the scenario's own)")
	rateLimit := fs.String("rate-limit", "", "enforce and announce a request rate per provider and key, N/DURATION such as 60/1m (x-ratelimit-*, anthropic-ratelimit-* headers; 429 when spent)")
	quiet := fs.Bool("quiet", false, "do not log each request to stderr")
	list := fs.Bool("list", false, "list the built-in scenarios and exit")
	allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback --addr (the mock accepts any key and answers anyone)")
	if code, ok := parseFlags(fs, args, env); !ok {
		return code
	}
	if *list {
		for _, n := range mock.BuiltinNames() {
			sc, _ := mock.Builtin(n)
			fmt.Fprintf(env.Stdout, "%-19s %s\n", n, sc.Description)
		}
		return 0
	}
	sc, err := mock.LoadScenario(*scenario)
	if err != nil {
		fmt.Fprintf(env.Stderr, "llmguard mock: --scenario: %v\n", err)
		return 2
	}
	if !*allowRemote && offLoopback(*addr) {
		fmt.Fprintf(env.Stderr, "llmguard mock: --addr %s is not a loopback address: the mock answers anyone; use 127.0.0.1:PORT, or pass --allow-remote\n", *addr)
		return 2
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "llmguard mock: --addr: %v\n", err)
		return 1
	}
	cfg := &mock.Config{Scenario: sc, Seed: *seed}
	if *rateLimit != "" {
		if cfg.RateLimit, err = mock.ParseRateLimit(*rateLimit); err != nil {
			fmt.Fprintf(env.Stderr, "llmguard mock: --rate-limit: %v\n", err)
			return 2
		}
	}
	if !*quiet {
		cfg.Logger = slog.New(slog.NewTextHandler(env.Stderr, nil))
	}
	srv := mock.New(cfg)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(env.Stdout, "llmguard mock listening on http://%s (scenario %s)\n", ln.Addr(), sc.Name)
	select {
	case <-ctx.Done():
	case err := <-errc:
		return fail(env, "mock", err, 1)
	}
	srv.Close() // release hanging requests
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	return 0
}
