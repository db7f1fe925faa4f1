// Package cli implements llmguard's subcommands, one file and one
// flag.FlagSet each. It wires configuration into the library packages.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Env is what a subcommand gets from the process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the environment (os.Getenv in production).
	Getenv func(string) string
}

// command is one subcommand. run returns the process exit code.
type command struct {
	summary string
	run     func(ctx context.Context, env *Env, args []string) int
}

// commands lists every subcommand; each file adds its own entry here.
var commands = map[string]command{
	"bench":   {"run a scorecard on 127.0.0.1, bounded in time: overhead beside a plain reverse proxy, scaling with the work, chaos (failure scenarios x client strategies)", runBench},
	"batch":   {"run a JSON Lines file of prompts (llmguard's, OpenAI Batch API or Anthropic Message Batches) through the engine, resumably", runBatch},
	"decode":  {"classify a provider error response (status, headers, body)", runDecode},
	"doctor":  {"check the config, every provider key (cheap model listing), key shapes, reachability and clock skew", runDoctor},
	"demo":    {"play a scripted bad night against the in-process mock: llmguard vs naive and no-retry clients (no keys)", runDemo},
	"config":  {"validate a configuration and print the effective one (config check [FILE])", runConfig},
	"mcp":     {"serve llmguard's MCP tools (summarize, ask, chat, batch_summarize, decode_error, llm_status) on stdio, or --http", runMCP},
	"mock":    {"serve a fault-injecting fake Anthropic/OpenAI/Gemini upstream (--scenario NAME|FILE)", runMock},
	"serve":   {"run the OpenAI- and Anthropic-compatible gateway (--addr, --config, --admin-addr)", runServe},
	"version": {"print the version, VCS revision and Go version this binary was built from", runVersion},
}

// Main runs llmguard with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return MainEnv(ctx, args, &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: osGetenv})
}

// MainEnv is Main with an explicit environment (for tests).
func MainEnv(ctx context.Context, args []string, env *Env) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(env.Stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args[0] = "version"
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "llmguard: unknown command %q (run 'llmguard help')\n", args[0])
		return 2
	}
	return cmd.run(ctx, env, args[1:])
}

func usage(w io.Writer) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("llmguard keeps LLM-backed tools and apps working when LLM APIs fail.\n\nUsage: llmguard <command> [flags]\n\nCommands:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-8s %s\n", n, commands[n].summary)
	}
	b.WriteString("\nRun 'llmguard <command> -h' for a command's flags.\n")
	io.WriteString(w, b.String())
}

// subcommand reads the subcommand of a command that has some (bench,
// config): ok is false when the command is done, with its exit code, after
// printing usage: 2 with no argument, 0 for -h, --help or help.
func subcommand(env *Env, usage string, args []string) (code int, ok bool) {
	if len(args) == 0 {
		io.WriteString(env.Stderr, usage)
		return 2, false
	}
	switch args[0] {
	case "-h", "--help", "help":
		io.WriteString(env.Stderr, usage)
		return 0, false
	}
	return 0, true
}

// fail says err on stderr as the command name's ("llmguard NAME: err")
// and returns code, the command's exit code.
func fail(env *Env, name string, err error, code int) int {
	fmt.Fprintf(env.Stderr, "llmguard %s: %v\n", name, err)
	return code
}

// printJSON writes v to stdout as indented JSON and a newline; false after
// an error, said on stderr as the command name's.
func printJSON(env *Env, name string, v any) bool {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fail(env, name, err, 1)
		return false
	}
	env.Stdout.Write(append(b, '\n'))
	return true
}

// parseFlags parses a subcommand's flags, which take no positional
// argument. ok is false when the subcommand is done, with its exit code: 0
// after -h (the flag package printed the usage), 2 after a bad flag (the
// flag package said which) or an argument.
func parseFlags(fs *flag.FlagSet, args []string, env *Env) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "llmguard %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2, false
	}
	return 0, true
}

// newFlagSet is a subcommand's flag set: its errors go to env's stderr and
// its usage is usage, then the flags' defaults.
func newFlagSet(env *Env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}
