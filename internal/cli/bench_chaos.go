package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmguard/llmguard/bench/chaos"
)

// runBenchChaos implements "llmguard bench chaos".
func runBenchChaos(ctx context.Context, env *Env, args []string) int {
	names := make([]string, 0, 11)
	for _, s := range chaos.Scenarios() {
		names = append(names, s.Name)
	}
	fs := newFlagSet(env, "bench chaos", fmt.Sprintf("Usage: llmguard bench chaos [--seed N] [--requests N] [--scenarios a,b] [--out DIR] [--json]\n\n"+
		"Plays failure scenarios against the in-process mock on 127.0.0.1 (no keys, no network) for five ways of calling\n"+
		"the same route (llmguard; a naive client retrying every error with a fixed backoff; a client that never retries;\n"+
		"the classic retry-429-and-5xx loop with jitter; that loop plus a fallback), and prints a Markdown scorecard:\n"+
		"success, full answers / clean errors / truncated, attempts per request, attempts wasted on errors that could\n"+
		"never succeed, waiting, p50/p99, cost and wasted cost, and the cells where llmguard misses a target or a\n"+
		"baseline does better. The whole scorecard takes about a minute.\n\nScenarios: %s\n\n", strings.Join(names, ", ")))
	seed := fs.Uint64("seed", chaos.DefaultSeed, "random seed for the mocks' faults and every strategy's jitter")
	n := fs.Int("requests", chaos.DefaultRequests, "requests each strategy sends in each scenario (at most 10000)")
	only := fs.String("scenarios", "", "run only these scenarios, comma-separated (default all)")
	out := fs.String("out", "", "also write the scorecard to DIR/chaos.md and its chart to DIR/chaos.svg")
	asJSON := fs.Bool("json", false, "print the scorecard as JSON instead of Markdown")
	if code, ok := parseFlags(fs, args, env); !ok {
		return code
	}
	if *n <= 0 || *n > 10000 {
		fmt.Fprintln(env.Stderr, "llmguard bench chaos: --requests must be between 1 and 10000")
		return 2
	}
	opt := &chaos.Options{Seed: *seed, Requests: *n, Progress: env.Stderr}
	if *only != "" {
		opt.Scenarios = strings.Split(*only, ",")
	}
	s, err := chaos.Run(ctx, opt)
	if err != nil {
		return fail(env, "bench chaos", err, 1)
	}
	var md, svg bytes.Buffer
	if err := s.Markdown(&md); err != nil {
		return fail(env, "bench chaos", err, 1)
	}
	if *out != "" {
		err := s.SVG(&svg)
		if err == nil {
			err = writeFiles(*out, map[string][]byte{"chaos.md": md.Bytes(), "chaos.svg": svg.Bytes()})
		}
		if err != nil {
			return fail(env, "bench chaos", err, 1)
		}
	}
	if *asJSON {
		if !printJSON(env, "bench chaos", s) {
			return 1
		}
		return 0
	}
	env.Stdout.Write(md.Bytes())
	return 0
}

// writeFiles writes each file into dir, creating dir.
func writeFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
