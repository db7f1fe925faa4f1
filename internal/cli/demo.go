package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/llmguard/llmguard/demo"
)

// demoUsage is the help of llmguard demo, before its flags.
const demoUsage = `Usage: llmguard demo [--requests N] [--seed N] [--json] [--metrics-addr ADDR]

Needs no key and no network: starts the mock on 127.0.0.1 with a scripted bad night and sends the same
requests through llmguard's engine, a naive client (retry every error, fixed backoff) and a no-retry client.
With --metrics-addr, llmguard's /metrics and dashboard (/ui/) are served there during the night and after
it, until interrupted.

`

// runDemo plays a scripted bad night against the in-process mock and shows
// what llmguard, a naive retrying client and a no-retry client got.
func runDemo(ctx context.Context, env *Env, args []string) int {
	fs := newFlagSet(env, "demo", demoUsage)
	n := fs.Int("requests", demo.DefaultRequests, "requests each client sends")
	seed := fs.Uint64("seed", demo.DefaultSeed, "random seed for the mock's faults")
	asJSON := fs.Bool("json", false, "print only the summary, as JSON")
	metricsAddr := fs.String("metrics-addr", "", "serve llmguard's /metrics and /ui/ on loopback `addr` (e.g. 127.0.0.1:9464) during the night, then until interrupted")
	if code, ok := parseFlags(fs, args, env); !ok {
		return code
	}
	if *n <= 0 || *n > 5000 {
		fmt.Fprintf(env.Stderr, "llmguard demo: --requests must be between 1 and 5000\n")
		return 2
	}
	opt := &demo.Options{Requests: *n, Seed: *seed}
	var metricsURL string
	if *metricsAddr != "" {
		opt.Metrics = demo.NewMetrics()
		url, stop, err := serveDemoMetrics(ctx, *metricsAddr, opt.Metrics)
		if err != nil {
			fmt.Fprintf(env.Stderr, "llmguard demo: --metrics-addr %s: %v\n", *metricsAddr, err)
			return 2
		}
		defer stop()
		metricsURL = url + "/metrics"
		fmt.Fprintf(env.Stderr, "llmguard demo: metrics on %s, the dashboard on %s/ui/\n", metricsURL, url)
	}
	if !*asJSON {
		opt.Progress = env.Stdout
		opt.TTY = isTerminal(env.Stdout)
		printScript(env.Stdout, opt)
	}
	s, err := demo.Run(ctx, opt)
	if err != nil {
		return fail(env, "demo", err, 1)
	}
	if *asJSON {
		if !printJSON(env, "demo", s) {
			return 1
		}
	} else {
		printSummary(env.Stdout, s)
	}
	if metricsURL != "" {
		fmt.Fprintf(env.Stderr, "llmguard demo: the night is over; serving %s until interrupted (Ctrl-C)\n", metricsURL)
		<-ctx.Done()
	}
	return 0
}

// serveDemoMetrics serves the demo's /metrics and dashboard on addr, a
// loopback address (the demo has no token to guard anything wider).
func serveDemoMetrics(ctx context.Context, addr string, m *demo.Metrics) (url string, stop func(), err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, err
	}
	if host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
	} else if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", nil, errors.New("not a loopback address (the demo serves its metrics on 127.0.0.1 only)")
	}
	ui := m.UI()
	return serveSide(ctx, addr, "", map[string]http.Handler{"GET /metrics": m.Handler(), "GET /ui": ui, "GET /ui/": ui},
		slog.New(slog.DiscardHandler))
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func printScript(w io.Writer, opt *demo.Options) {
	var b strings.Builder
	b.WriteString("llmguard demo: a bad night, compressed into a few seconds, against the mock on 127.0.0.1 (no keys, no network).\n")
	fmt.Fprintf(&b, "Route default: %s\n", strings.Join(demo.Targets(), " → "))
	b.WriteString("The primary's night:\n")
	for _, p := range demo.Night() {
		fmt.Fprintf(&b, "  %-17s %s\n", p.Name, p.Primary)
	}
	b.WriteString("All night:\n")
	for _, o := range demo.Others() {
		fmt.Fprintf(&b, "  %s\n", o)
	}
	fmt.Fprintf(&b, "Waits are real (retry-after 1s, backoff from 50ms; llmguard hedges a call with no answer after %v); only the\n"+
		"night is short. The same requests (one in %d streamed) go, at the same moments, to llmguard, to a naive client and\n"+
		"to a no-retry client, each against its own copy of the mock.\n\n", demo.HedgeAfter, demo.StreamEvery)
	io.WriteString(w, b.String())
}

func printSummary(w io.Writer, s *demo.Summary) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nMorning report: %d requests per client over a %.1fs night (%.1fs in all).\n\n", s.Requests, s.NightSeconds, s.ElapsedSeconds)
	fmt.Fprintf(&b, "  %-9s %7s %7s %18s %8s %10s %8s %10s %10s\n", "client", "served", "failed", "upstream attempts", "retries", "fallbacks", "skips", "waited", "wasted")
	for _, o := range []demo.Outcome{s.Llmguard, s.Naive, s.NoRetry} {
		fmt.Fprintf(&b, "  %-9s %7d %7d %18d %8d %10d %8d %9.1fs %10s\n", o.Client, o.Served, o.Failed, o.MockAttempts, o.Retries, o.Fallbacks, o.Skips, o.WaitedSeconds,
			fmt.Sprintf("$%.6f", o.WastedUSD))
	}
	b.WriteString("\n")
	for _, o := range []demo.Outcome{s.Llmguard, s.Naive, s.NoRetry} {
		fmt.Fprintf(&b, "  %-9s %s", o.Client, o.Description)
		if len(o.ServedBy) > 0 && o.Client == "llmguard" {
			b.WriteString("; answers from " + demo.Counts(o.ServedBy))
		}
		if o.Hedges > 0 {
			fmt.Fprintf(&b, "; hedged %d slow calls (the hedge answered first in %d)", o.Hedges, o.HedgesWon)
		}
		if len(o.Failures) > 0 {
			b.WriteString("; failures: " + demo.Counts(o.Failures))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n  upstream attempts are counted by the mock's request log; skips are targets passed over at no cost (breaker\n" +
		"  open, rate-limit cooldown); waited is the sum over all requests; wasted is what attempts that produced\n" +
		"  nothing cost at list prices (answered 200, then broke: groq's truncated bodies; error statuses cost nothing).\n")
	io.WriteString(w, b.String())
}
