package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/lograte"
	"github.com/llmguard/llmguard/resilience"
)

// logFlags are the logging flags of serve and mcp: -v (debug: each engine
// event, every failed attempt's one-liner among them) and --log-format.
type logFlags struct {
	verbose *bool
	format  *string
	rate    *lograte.Handler // set by logger
}

func addLogFlags(fs *flag.FlagSet, verboseUsage string) *logFlags {
	return &logFlags{
		verbose: fs.Bool("v", false, verboseUsage),
		format:  fs.String("log-format", "text", "log line format on stderr: text (key=value) or json (one object per line)"),
	}
}

// logger returns the logger writing to w (stderr: in MCP stdio mode stdout
// carries only JSON-RPC), or an error naming the flag. Every line has the
// known secrets redacted (classify.RedactHandler), and identical warnings
// are logged once per interval with a count (lograte); call flush before
// exiting.
func (f *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if *f.verbose {
		opts.Level = slog.LevelDebug
	}
	var h slog.Handler
	switch *f.format {
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("--log-format: want text or json, not %q", *f.format)
	}
	f.rate = lograte.New(h, nil)
	return slog.New(classify.RedactHandler(f.rate)), nil
}

// parse parses a command's flags (parseFlags), then opens its logger on
// stderr (logger). ok is false when the command is done, with its exit
// code: parseFlags's, or 2 after a bad --log-format (said on stderr).
func (f *logFlags) parse(fs *flag.FlagSet, args []string, env *Env) (l *slog.Logger, code int, ok bool) {
	if code, ok := parseFlags(fs, args, env); !ok {
		return nil, code, false
	}
	l, err := f.logger(env.Stderr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "llmguard %s: %v\n", fs.Name(), err)
		return nil, 2, false
	}
	return l, 0, true
}

// flush logs the counts of warnings still held back.
func (f *logFlags) flush() {
	if f.rate != nil {
		f.rate.Flush()
	}
}

// engineOptions are the engine options of a command logging to l: its
// logger, and with -v every engine event at debug level.
func (f *logFlags) engineOptions(l *slog.Logger) *resilience.Options {
	o := &resilience.Options{Logger: l}
	if *f.verbose {
		o.OnEvent = func(ev resilience.Event) { logEvent(l, ev) }
	}
	return o
}

// logEvent logs one engine event at debug level (-v): a failed attempt
// carries its one-line verdict.
func logEvent(l *slog.Logger, ev resilience.Event) {
	ctx := context.Background()
	if !l.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := []slog.Attr{slog.String("kind", string(ev.Kind)), slog.String("route", ev.Route), slog.String("target", ev.Target)}
	if ev.Attempt > 0 {
		attrs = append(attrs, slog.Int("attempt", ev.Attempt))
	}
	if ev.Verdict != nil {
		attrs = append(attrs, slog.String("verdict", ev.Verdict.Message))
	}
	if ev.Wait > 0 {
		attrs = append(attrs, slog.Duration("wait", ev.Wait))
	}
	if ev.From != "" {
		// A breaker's states, or the target a fallback leaves.
		attrs = append(attrs, slog.String("from", ev.From))
	}
	if ev.To != "" {
		attrs = append(attrs, slog.String("to", ev.To))
	}
	if ev.Reason != "" {
		attrs = append(attrs, slog.String("reason", ev.Reason))
	}
	l.LogAttrs(ctx, slog.LevelDebug, "engine event", attrs...)
}
