package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/llmguard/llmguard/batch"
	"github.com/llmguard/llmguard/gateway"
	"github.com/llmguard/llmguard/internal/wait"
)

// Exit codes of llmguard batch.
const (
	batchDone    = 0 // every item answered
	batchFailed  = 1 // every item has its record, some failed
	batchUsage   = 2 // flags, input or configuration refused before anything ran
	batchStopped = 3 // stopped with items left: the same command resumes them
)

// batchUsageText is the help of llmguard batch, before its flags.
const batchUsageText = `Usage: llmguard batch --in items.jsonl --out results.jsonl [--route NAME] [--concurrency N]
         [--prompt-template FILE] [--max-cost USD] [--retry-failed] [--no-wait-past 10m] [--config FILE] [-v]

Runs every line of --in through llmguard's engine and appends each one's result to --out.
Lines are llmguard's {"id", "text"|"prompt"|"messages"}, OpenAI Batch API requests or Anthropic
Message Batches requests (results in the same API's format). Run it again to resume: items already
in --out are skipped. Ctrl-C stops taking items and waits for those in flight; a second Ctrl-C aborts them.
Exit: 0 all answered, 1 some failed, 2 nothing ran (bad flags or input), 3 stopped with items left.

Flags:
`

// runBatch runs a file of prompts through the engine (see batch.Runner).
func runBatch(ctx context.Context, env *Env, args []string) int {
	fs := newFlagSet(env, "batch", batchUsageText)
	inPath := fs.String("in", "", "input `file` (JSON Lines)")
	outPath := fs.String("out", "", "results `file` (JSON Lines; created, or resumed when it exists)")
	route := fs.String("route", "", "route, provider/model or model id for every item (default: each line's model, else route default)")
	conc := fs.Int("concurrency", batch.DefaultConcurrency, "items in flight at once")
	tmplPath := fs.String("prompt-template", "", "Go text/template `file` rendering a \"text\" item's prompt ({{.Text}}, {{.ID}}, {{.Fields.NAME}}; default: summarize in five bullets)")
	maxCost := fs.Float64("max-cost", 0, "stop taking items once spent plus in flight would pass this many `USD` (0: no ceiling)")
	retryFailed := fs.Bool("retry-failed", false, "send again the items --out records as failed")
	noWaitPast := fs.Duration("no-wait-past", 0, "stop instead of pausing when every target refuses for longer than this (a per-day quota); 0: wait")
	configPath := fs.String("config", "", "config `file` (default: $LLMGUARD_CONFIG, else zero config from provider keys in the environment)")
	logs := addLogFlags(fs, "verbose (debug) logs on stderr: every engine event, each failed attempt's one-line verdict")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return batchUsage
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "llmguard batch: "+format+"\n", a...)
		return batchUsage
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected argument %q", fs.Arg(0))
	case *inPath == "" || *outPath == "":
		return fail("--in and --out are required (llmguard batch --in items.jsonl --out results.jsonl)")
	case *conc < 1:
		return fail("--concurrency %d: want 1 or more", *conc)
	case *maxCost < 0:
		return fail("--max-cost %g: want 0 (no ceiling) or more", *maxCost)
	}
	if dir := filepath.Dir(*outPath); !isDir(dir) {
		return fail("--out %s: directory %s does not exist (create it first)", *outPath, dir)
	}
	cfg := &batch.Config{Codec: gateway.Codec{}, Route: *route, Concurrency: *conc, MaxCost: *maxCost, RetryFailed: *retryFailed, NoWaitPast: *noWaitPast}
	if *tmplPath != "" {
		b, err := os.ReadFile(*tmplPath)
		if err != nil {
			return fail("--prompt-template: %v", err)
		}
		cfg.Template = string(b)
	}
	in, err := batch.Open(*inPath)
	if err != nil {
		return fail("--in: %v", err)
	}

	disp := newBatchDisplay(env.Stderr)
	logger, err := logs.logger(disp)
	if err != nil {
		return fail("%v", err)
	}
	defer logs.flush()
	opts := logs.engineOptions(logger)
	app, err := loadAppWith(ctx, env, *configPath, opts)
	if err != nil {
		return fail("%v", err)
	}
	defer app.Close()
	if onlySimulated(app) {
		return fail("no provider key is set: set ANTHROPIC_API_KEY, OPENAI_API_KEY or another provider's key, or pass --config FILE (a batch never answers from the simulated provider)")
	}
	routes := app.Engine.Routes()
	cfg.Resolve = func(name string) (string, error) { return app.Catalog.ResolveModel(name, routes) }
	cfg.OnEvent = disp.event
	r, err := batch.New(app.Engine, cfg)
	if err != nil {
		return fail("--prompt-template: %v", err)
	}
	disp.runner = r
	return runBatchSignals(ctx, env, r, in, *outPath, disp)
}

// batchStop is what a stop request does to a batch run: the first stops
// it taking items (stop), a second Ctrl-C aborts the items in flight
// (abort). One Ctrl-C comes twice, as a signal and as the end of the
// command's context (main's signal.NotifyContext), in either order: only
// signals count towards the second.
type batchStop struct {
	stopped bool
	signals int
}

// signal is a Ctrl-C or SIGTERM.
func (s *batchStop) signal() (stop, abort bool) {
	s.signals++
	if s.signals > 1 {
		return false, true
	}
	return s.ctxDone(), false
}

// ctxDone is the end of the command's context: it stops the run unless
// it is stopped already.
func (s *batchStop) ctxDone() (stop bool) {
	stop, s.stopped = !s.stopped, true
	return stop
}

// runBatchSignals runs r until it ends: the first Ctrl-C (or SIGTERM, or
// ctx) stops it taking items, a second Ctrl-C aborts those in flight (see
// batchStop).
func runBatchSignals(ctx context.Context, env *Env, r *batch.Runner, in *batch.Input, out string, disp *batchDisplay) int {
	runCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		var st batchStop
		act := func(stop, abortNow bool) {
			switch {
			case stop:
				disp.line("stopping: waiting for the items in flight (Ctrl-C again aborts them, to do again next run)")
				r.Stop()
			case abortNow:
				disp.line("aborting the items in flight")
				abort()
			}
		}
		ctxDone := ctx.Done()
		for {
			select {
			case <-sigs:
				act(st.signal())
			case <-ctxDone:
				ctxDone = nil
				act(st.ctxDone(), false)
			case <-done:
				return
			}
		}
	}()
	disp.start()
	sum, err := r.Run(runCtx, in, out)
	disp.finish()
	if err != nil {
		var re *batch.ResolveError
		if errors.As(err, &re) {
			fmt.Fprintf(env.Stderr, "llmguard batch: %v; pass --route NAME to send every item to one route\n", err)
		} else {
			fmt.Fprintf(env.Stderr, "llmguard batch: %v\n", err)
		}
		if sum == nil {
			return batchUsage
		}
	}
	printBatchSummary(env.Stdout, sum)
	switch {
	case sum.Left() > 0 || err != nil:
		return batchStopped
	case sum.Failed > 0:
		return batchFailed
	}
	return batchDone
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// printBatchSummary writes how the run ended, e.g.
//
//	batch: 1247 items: 1240 answered, 5 failed (invalid_request 3, malformed 2), 2 left; 312 done by an earlier run
//	attempts 1302 (55 wasted), cost $1.2345 ($0.0000 wasted), 3m12s (6.5 items/s)
//	results: results.jsonl (OpenAI Batch API format)
func printBatchSummary(w io.Writer, s *batch.Summary) {
	var b strings.Builder
	fmt.Fprintf(&b, "batch: %d items: %d answered, %d failed", s.Total, s.Served, s.Failed)
	if len(s.FailedByClass) > 0 {
		classes := make([]string, 0, len(s.FailedByClass))
		for c, n := range s.FailedByClass {
			classes = append(classes, fmt.Sprintf("%s %d", c, n))
		}
		sort.Strings(classes)
		fmt.Fprintf(&b, " (%s)", strings.Join(classes, ", "))
	}
	fmt.Fprintf(&b, ", %d left", s.Left())
	if s.Skipped > 0 {
		fmt.Fprintf(&b, "; %d done by an earlier run", s.Skipped)
	}
	fmt.Fprintf(&b, "\nattempts %d (%d wasted), cost $%.4f ($%.4f wasted), %s (%.1f items/s)\n", s.Attempts, s.WastedAttempts,
		s.CostUSD, s.WastedCostUSD, s.Elapsed.Round(time.Millisecond), s.Rate)
	fmt.Fprintf(&b, "results: %s (%s format)\n", s.Out, s.Format)
	if s.Stopped != "" {
		fmt.Fprintf(&b, "stopped: %s; run the same command again to resume the %d left\n", s.Stopped, s.Left())
	}
	io.WriteString(w, b.String())
}

// batchDisplay shows a run on stderr: on a terminal a progress bar redrawn
// in place (done / failed / in flight / paused, rate, ETA, cost, the
// current wait), else a plain line every plainEvery; in both, one line per
// pause, resume, stop, warning and (the first few) failed items. Log lines
// go through it too, so they never tear the bar.
type batchDisplay struct {
	w      io.Writer
	tty    bool
	runner *batch.Runner

	mu     sync.Mutex
	shown  bool   // the bar is on screen
	failed int    // failure lines shown
	stop   func() // stops the progress ticks (nil before start)
}

// Display cadence, and how many failed items get a line of their own.
const (
	barEvery    = 250 * time.Millisecond
	plainEvery  = 10 * time.Second
	failedLines = 20
)

func newBatchDisplay(w io.Writer) *batchDisplay {
	d := &batchDisplay{w: w}
	if f, ok := w.(*os.File); ok && os.Getenv("TERM") != "dumb" {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			d.tty = true
		}
	}
	return d
}

// Write is the log's writer: a log line above the bar.
func (d *batchDisplay) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clearLocked()
	return d.w.Write(p)
}

// line writes one "batch: " line above the bar.
func (d *batchDisplay) line(s string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clearLocked()
	fmt.Fprintf(d.w, "batch: %s\n", s)
}

func (d *batchDisplay) clearLocked() {
	if d.shown {
		io.WriteString(d.w, "\r\033[K")
		d.shown = false
	}
}

// event is the runner's Config.OnEvent.
func (d *batchDisplay) event(ev batch.Event) {
	switch ev.Kind {
	case batch.EventPause:
		d.line("paused" + untilText(ev.Until, ev.Time) + ": " + ev.Reason)
	case batch.EventResume:
		d.line("resumed: " + ev.Reason)
	case batch.EventStop:
		d.line("stopping: " + ev.Reason)
	case batch.EventWarn:
		d.line("warning: " + ev.Reason + " (its key or account; the route's other targets go on)")
	case batch.EventItem:
		if rec := ev.Record; rec.Status == batch.StatusFailed {
			d.mu.Lock()
			d.failed++
			n := d.failed
			d.mu.Unlock()
			switch {
			case n <= failedLines && rec.ID == "":
				d.line("failed: " + rec.Error)
			case n <= failedLines:
				d.line(fmt.Sprintf("failed: %q (line %d): %s", rec.ID, rec.Line, rec.Error))
			case n == failedLines+1:
				d.line("more items failed: see the results file")
			}
		}
	}
}

// untilText is " until 15:04:05 MST (in 20s)", or "" for an unknown end.
func untilText(until, now time.Time) string {
	if until.IsZero() {
		return ""
	}
	layout := "15:04:05 MST"
	if y1, m1, d1 := until.Date(); until.Sub(now) > 12*time.Hour || d1 != now.Day() || m1 != now.Month() || y1 != now.Year() {
		layout = "Mon Jan 2 15:04 MST"
	}
	return fmt.Sprintf(" until %s (in %s)", until.Format(layout), until.Sub(now).Round(time.Second))
}

// start shows the progress until finish.
func (d *batchDisplay) start() {
	every := plainEvery
	if d.tty {
		every = barEvery
	}
	d.stop = wait.Every(context.Background(), every, d.tick)
}

func (d *batchDisplay) tick() {
	p := d.runner.Progress()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tty {
		d.clearLocked()
		io.WriteString(d.w, progressText(p, true))
		d.shown = true
		return
	}
	fmt.Fprintf(d.w, "batch: %s\n", progressText(p, false))
}

// finish stops the progress and clears the bar.
func (d *batchDisplay) finish() {
	if d.stop != nil {
		d.stop()
	}
	d.mu.Lock()
	d.clearLocked()
	d.mu.Unlock()
}

// progressText is one progress line, e.g.
// "[########............] 412/1247 · 3 failed · 8 in flight · 12.3/s · ETA 1m8s · $0.4123".
func progressText(p batch.Progress, bar bool) string {
	var b strings.Builder
	done := p.Skipped + p.Served + p.Failed
	if bar {
		const width = 20
		n := 0
		if p.Total > 0 {
			n = done * width / p.Total
		}
		b.WriteString("[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "] ")
	}
	fmt.Fprintf(&b, "%d/%d done · %d failed · %d in flight · %.1f/s", done, p.Total, p.Failed, p.InFlight, p.Rate)
	if eta := p.ETA(); eta > 0 && !p.Paused {
		fmt.Fprintf(&b, " · ETA %s", eta.Round(time.Second))
	}
	fmt.Fprintf(&b, " · $%.4f", p.CostUSD)
	if p.Paused {
		// The few words of why (the whole line was shown when the pause began).
		why, _, _ := strings.Cut(p.Reason, ": ")
		b.WriteString(" · paused" + untilText(p.Until, time.Now()) + ": " + why)
	}
	return b.String()
}
