package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/llmguard/llmguard/config"
)

const configUsage = `Usage: llmguard config check [FILE]

Validates a configuration and prints the effective configuration as YAML
(defaults and environment applied, API keys masked). Without FILE it uses
$LLMGUARD_CONFIG, else ./llmguard.yaml, else the zero-config built from the
provider keys in the environment.

Exit status: 0 valid, 1 invalid (each problem on one line as
file:line:column: field: message), 2 bad usage.

See docs/config.md for every key and its default.
`

// runConfig implements "llmguard config check [FILE]".
func runConfig(ctx context.Context, env *Env, args []string) int {
	if code, ok := subcommand(env, configUsage, args); !ok {
		return code
	}
	switch args[0] {
	case "check":
		return runConfigCheck(env, args[1:])
	}
	fmt.Fprintf(env.Stderr, "llmguard config: unknown subcommand %q (want check)\n", args[0])
	return 2
}

func runConfigCheck(env *Env, args []string) int {
	fs := flag.NewFlagSet("config check", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { io.WriteString(env.Stderr, configUsage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(env.Stderr, "llmguard config check: want at most one FILE, got %d\n", fs.NArg())
		return 2
	}
	var (
		cfg *config.Config
		err error
	)
	if fs.NArg() == 1 {
		cfg, err = config.Load(fs.Arg(0), env.Getenv)
	} else {
		cfg, err = config.LoadDefault(env.Getenv)
	}
	if err != nil {
		lines := strings.Split(err.Error(), "\n")
		for _, l := range lines {
			fmt.Fprintln(env.Stderr, l)
		}
		if len(lines) > 1 {
			fmt.Fprintf(env.Stderr, "llmguard config check: %d problems\n", len(lines))
		}
		return 1
	}
	out, err := cfg.EffectiveYAML()
	if err != nil {
		return fail(env, "config check", err, 1)
	}
	fmt.Fprintf(env.Stdout, "# llmguard effective configuration (source: %s; keys masked)\n", cfg.Source)
	env.Stdout.Write(out)
	return 0
}
