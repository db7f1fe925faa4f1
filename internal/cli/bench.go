package cli

import (
	"context"
	"fmt"
	"io"
)

// This file is only the dispatcher of `llmguard bench`: each scorecard
// lives in its own package under bench/ and its own file here, which
// parses its flags and prints its report.

const benchUsage = `Usage: llmguard bench <scorecard> [flags]

Scorecards anyone can rerun; every one runs on 127.0.0.1 only and is
bounded in requests and time:
  chaos      failure scenarios x client strategies

Run 'llmguard bench <scorecard> -h' for its flags.
`

// runBench implements "llmguard bench <scorecard>".
func runBench(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 {
		io.WriteString(env.Stderr, benchUsage)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		io.WriteString(env.Stderr, benchUsage)
		return 0
	case "chaos":
		return runBenchChaos(ctx, env, args[1:])
	}
	fmt.Fprintf(env.Stderr, "llmguard bench: unknown scorecard %q (want chaos)\n", args[0])
	return 2
}
