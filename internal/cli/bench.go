package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/llmguard/llmguard/bench/overhead"
)

// This file is the dispatcher of `llmguard bench`: each scorecard lives
// in its own package under bench/ (overhead and scaling: bench/overhead,
// whose flags are parsed here; chaos: bench/chaos, in bench_chaos.go).

const benchUsage = `Usage: llmguard bench <scorecard> [flags]

Scorecards anyone can rerun; every one runs on 127.0.0.1 only and is
bounded in requests and time:
  overhead   the latency, throughput and CPU llmguard adds beside a plain
             httputil.ReverseProxy, both in front of a zero-latency mock
  scaling    CPU and allocations per request as the work grows: bodies of
             1-512 KB, streams of 10-1,000 chunks, 1-256 connections
  chaos      failure scenarios x client strategies (Markdown and an SVG chart)

Run 'llmguard bench <scorecard> -h' for its flags.
`

// runBench implements "llmguard bench <scorecard>".
func runBench(ctx context.Context, env *Env, args []string) int {
	if code, ok := subcommand(env, benchUsage, args); !ok {
		return code
	}
	switch args[0] {
	case "overhead":
		return runBenchOverhead(ctx, env, args[1:])
	case "scaling":
		return runBenchScaling(ctx, env, args[1:])
	case "chaos":
		return runBenchChaos(ctx, env, args[1:])
	case "child": // not for people: the proxy's or the gateway's process of a scorecard
		if err := overhead.ServeChild(ctx, args[1:], env.Stdin, env.Stdout); err != nil {
			return fail(env, "bench child", err, 1)
		}
		return 0
	}
	fmt.Fprintf(env.Stderr, "llmguard bench: unknown scorecard %q (want overhead, scaling or chaos)\n", args[0])
	return 2
}

// overheadUsage is the help of llmguard bench overhead, before its flags.
const overheadUsage = `Usage: llmguard bench overhead [--rate QPS | --concurrency N] [--duration 20s] [--stream]

Sends the same load straight to an in-process zero-latency mock (the calibration), through a plain
httputil.ReverseProxy and through llmguard's gateway, the three taking turns, all on 127.0.0.1, and prints
in Markdown the latency each adds (p50/p90/p99 less the calibration's) at a fixed rate, the highest rate
each sustains, the throughput at a fixed concurrency, the CPU and allocations per request, peak RSS and
the machine. Without --rate or --concurrency it measures both (1,000 QPS and 64 connections); the run
takes about twice --duration.

`

// runBenchOverhead implements "llmguard bench overhead".
func runBenchOverhead(ctx context.Context, env *Env, args []string) int {
	fs := newFlagSet(env, "bench overhead", overheadUsage)
	rate := fs.Float64("rate", 0, "measure the added latency at this fixed rate (requests per second, open loop), then higher rates (default 1000 without --concurrency)")
	conns := fs.Int("concurrency", 0, "measure the throughput of this many concurrent clients (closed loop) (default 64 without --rate)")
	d := fs.Duration("duration", 20*time.Second, "length of the fixed-rate measurement, the three paths together (at most 10m)")
	stream := fs.Bool("stream", false, "send streaming requests")
	search := fs.Bool("search", true, "with a rate, also find the highest rate each path sustains")
	if code, ok := parseFlags(fs, args, env); !ok {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var problem string
	switch {
	case set["rate"] && set["concurrency"]:
		problem = "give --rate or --concurrency, not both"
	case set["rate"] && (*rate <= 0 || *rate > 50_000):
		problem = "--rate must be above 0 and at most 50000"
	case set["concurrency"] && (*conns <= 0 || *conns > 1024):
		problem = "--concurrency must be between 1 and 1024"
	case *d <= 0 || *d > 10*time.Minute:
		problem = "--duration must be above 0 and at most 10m"
	}
	if problem != "" {
		fmt.Fprintf(env.Stderr, "llmguard bench overhead: %s\n", problem)
		return 2
	}
	rep, err := overhead.Run(ctx, &overhead.Config{Rate: *rate, Concurrency: *conns, Duration: *d, Stream: *stream,
		NoSearch: !*search, Progress: env.Stderr})
	return benchReport(env, "overhead", rep, err)
}

// scalingUsage is the help of llmguard bench scaling, before its flags.
const scalingUsage = `Usage: llmguard bench scaling [--duration 1.5s] [--group body|stream|conns]

Measures, beside a plain httputil.ReverseProxy in the same run, the CPU time and allocations per request
llmguard adds for request bodies of 1/32/128/512 KB (same dialect and across), streams of 10/100/1,000
chunks and 1/16/64/256 connections, and (without --group) the resident set of each 10 s after a burst of
512 KB requests, all on 127.0.0.1, and prints the table in Markdown.

`

// runBenchScaling implements "llmguard bench scaling".
func runBenchScaling(ctx context.Context, env *Env, args []string) int {
	fs := newFlagSet(env, "bench scaling", scalingUsage)
	d := fs.Duration("duration", 1500*time.Millisecond, "each row's measurement, the three paths together (at most 1m)")
	group := fs.String("group", "", "run only this group of rows: body, stream or conns (default all)")
	if code, ok := parseFlags(fs, args, env); !ok {
		return code
	}
	var groups []string
	switch *group {
	case "":
	case overhead.GroupBody, overhead.GroupStream, overhead.GroupConns:
		groups = []string{*group}
	default:
		fmt.Fprintf(env.Stderr, "llmguard bench scaling: --group %q: want body, stream or conns\n", *group)
		return 2
	}
	if *d <= 0 || *d > time.Minute {
		fmt.Fprintln(env.Stderr, "llmguard bench scaling: --duration must be above 0 and at most 1m")
		return 2
	}
	sc, err := overhead.Scale(ctx, &overhead.ScaleConfig{Duration: *d, Groups: groups, Progress: env.Stderr})
	return benchReport(env, "scaling", sc, err)
}

// benchReport prints a scorecard's report (when there is one) and its
// error: exit 0, or 1 when some requests failed or the run was stopped.
func benchReport(env *Env, name string, rep interface{ Markdown(io.Writer) error }, err error) int {
	code := 0
	if rep != nil {
		if werr := rep.Markdown(env.Stdout); werr != nil {
			fmt.Fprintf(env.Stderr, "llmguard bench %s: %v\n", name, werr)
			code = 1
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "llmguard bench %s: %v\n", name, err)
		code = 1
	}
	return code
}
