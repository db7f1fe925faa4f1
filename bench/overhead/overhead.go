package overhead

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/llmguard/llmguard/internal/defaults"
)

// Config is one overhead run. The zero value measures everything with
// the defaults: 1,000 QPS, 64 connections, 20 seconds.
type Config struct {
	// Rate is the fixed request rate (per second) of the latency
	// measurement. Zero means 1,000, unless Concurrency is set alone: then
	// no rate is measured.
	Rate float64
	// Concurrency is the number of clients of the throughput measurement.
	// Zero means 64, unless Rate is set alone: then no throughput is
	// measured.
	Concurrency int
	// Duration is how long the fixed-rate measurement runs, the three paths
	// together (0 = 20s). The search for the highest rate and the
	// throughput measurement take up to about as long each.
	Duration time.Duration
	// Stream sends streaming requests.
	Stream bool
	// NoSearch skips the search for the highest rate each path sustains.
	NoSearch bool
	// Progress, when set, gets a line as each measurement starts.
	Progress io.Writer
	// Spawn starts the proxy's and the gateway's processes (nil: SpawnSelf).
	Spawn Spawn
}

// SustainP99 is what a path must keep to sustain a rate: every request
// answered, and the p99 latency, timed from when each request was due,
// at most this.
const SustainP99 = 50 * time.Millisecond

// ladder is the rates the search tries above the fixed rate.
var ladder = []float64{1000, 2000, 3000, 5000, 7500, 10_000, 15_000, 20_000, 30_000, maxRate}

// Report is an overhead run's measurements.
type Report struct {
	Machine Machine
	// Request describes the request every path is sent.
	Request string
	Stream  bool
	// Fixed is the latency at Config.Rate (nil: not measured).
	Fixed *Step
	// Ladder is each rate of the search, in order; a path that failed one
	// rate is not sent the higher ones (its Stats are zero there).
	Ladder []Step
	// Concurrency and Throughput: the closed-loop measurement (0, nil: not
	// measured).
	Concurrency int
	Throughput  *Result
	Elapsed     time.Duration
}

// Step is one rate's measurement.
type Step struct {
	Rate float64
	Result
}

// Sustains reports whether s kept up with its rate (see SustainP99).
func Sustains(s Stats) bool { return s.Requests > 0 && s.Errors == 0 && s.P99 <= SustainP99 }

// Highest is the highest rate of the ladder (or the fixed rate) that each
// path sustained, 0 where it sustained none.
func (r *Report) Highest() (calibration, proxy, gateway float64) {
	steps := r.Ladder
	if r.Fixed != nil {
		steps = append([]Step{*r.Fixed}, steps...)
	}
	best := func(pick func(*Result) Stats) float64 {
		h := 0.0
		for i := range steps {
			if Sustains(pick(&steps[i].Result)) {
				h = max(h, steps[i].Rate)
			}
		}
		return h
	}
	return best(func(r *Result) Stats { return r.Calibration }), best(func(r *Result) Stats { return r.Proxy }),
		best(func(r *Result) Stats { return r.Gateway })
}

func (c *Config) withDefaults() Config {
	d := defaults.Copy(c)
	if d.Rate <= 0 && d.Concurrency <= 0 {
		d.Rate, d.Concurrency = 1000, 64
	}
	d.Rate = min(d.Rate, maxRate)
	d.Concurrency = min(d.Concurrency, maxInFlight)
	if d.Duration <= 0 {
		d.Duration = 20 * time.Second
	}
	return d
}

// chat is the scorecard's request: a short OpenAI chat completion, from
// the mock or, with chunks, a stream of that many chunks.
func chat(stream bool, chunks int) *workload {
	const body = `{"model":%q,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Summarise the benefits of circuit breakers in two sentences"}],"max_tokens":128,"temperature":0.2%s}`
	extra := ""
	if stream {
		extra = `,"stream":true`
	}
	const api = "/v1/chat/completions"
	w := &workload{urlPath: forPaths(api, api), stream: stream,
		body: forPaths(fmt.Appendf(nil, body, "gpt-4o", extra), fmt.Appendf(nil, body, "default", extra))}
	if chunks > 0 {
		w.urlPath[direct] = fmt.Sprintf("/chunks/%d%s", chunks, api)
		w.urlPath[proxy] = w.urlPath[direct]
		w.body[guard] = fmt.Appendf(nil, body, fmt.Sprintf("chunks-%d", chunks), extra)
	}
	return w
}

// Run measures the gateway's overhead: the same load straight to an
// in-process zero-latency mock (the calibration), through a plain
// httputil.ReverseProxy and through the gateway, interleaved in rounds,
// everything on 127.0.0.1. It returns the report, and an error joining
// the phases whose requests failed (the report is still filled in).
func Run(ctx context.Context, c *Config) (*Report, error) {
	cfg := c.withDefaults()
	t0 := time.Now()
	st, err := newStack(spawner(cfg.Spawn))
	if err != nil {
		return nil, err
	}
	defer st.close()
	w := chat(cfg.Stream, 0)
	rep := &Report{Machine: thisMachine(), Stream: cfg.Stream,
		Request: fmt.Sprintf("an OpenAI chat completion (%d-byte body), answered in full by the mock", len(w.body[direct]))}
	if cfg.Stream {
		rep.Request = fmt.Sprintf("a streaming OpenAI chat completion (%d-byte body), answered in full by the mock", len(w.body[direct]))
	}
	warm(ctx, st, w, 4)
	var errs []error
	say := func(format string, a ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "overhead: "+format+"\n", a...)
		}
	}
	if cfg.Rate > 0 {
		say("%g QPS for %s, the three paths in turns", cfg.Rate, cfg.Duration)
		rounds := max(1, int(cfg.Duration/(3*time.Second)))
		t := interleave(rounds, cfg.Duration/time.Duration(3*rounds), nil, func(p path, d time.Duration) *tally {
			return measure(st, p, func() *tally { return paced(ctx, st, w, p, cfg.Rate, d) })
		})
		rep.Fixed = &Step{Rate: cfg.Rate, Result: result(t)}
		for p := range npaths {
			errs = append(errs, t[p].err(fmt.Sprintf("%g QPS", cfg.Rate), p))
		}
	}
	if cfg.Concurrency > 0 {
		d := cfg.Duration
		if cfg.Rate > 0 {
			d /= 2
		}
		say("%d connections for %s", cfg.Concurrency, d)
		rounds := max(1, int(d/(3*time.Second)))
		t := interleave(rounds, d/time.Duration(3*rounds), nil, func(p path, d time.Duration) *tally {
			return measure(st, p, func() *tally { return closed(ctx, st, w, p, cfg.Concurrency, d) })
		})
		r := result(t)
		rep.Concurrency, rep.Throughput = cfg.Concurrency, &r
		for p := range npaths {
			errs = append(errs, t[p].err(fmt.Sprintf("%d connections", cfg.Concurrency), p))
		}
	}
	if cfg.Rate > 0 && !cfg.NoSearch { // last: its overloaded steps leave the processes larger
		say("higher rates, until each path fails one")
		rep.Ladder = search(ctx, st, w, cfg.Rate, min(time.Second, max(200*time.Millisecond, cfg.Duration/20)))
	}
	rep.Elapsed = time.Since(t0)
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return rep, errors.Join(errs...)
}

func spawner(s Spawn) Spawn {
	if s == nil {
		return SpawnSelf
	}
	return s
}

// warm opens each path's connections, as many as conns clients can use at
// once (fill), and runs its first requests.
func warm(ctx context.Context, st *stack, w *workload, conns int) {
	for p := range npaths {
		fill(ctx, st, w, p, conns)
		closed(ctx, st, w, p, conns, 100*time.Millisecond)
	}
}

// search sends each rate of the ladder above from, step long, to every
// path that sustained the rates below it, until none is left.
func search(ctx context.Context, st *stack, w *workload, from float64, step time.Duration) []Step {
	var out []Step
	var failed [npaths]bool
	for _, rate := range ladder {
		if rate <= from {
			continue
		}
		if ctx.Err() != nil || failed[direct] && failed[proxy] && failed[guard] {
			break
		}
		t := interleave(1, step, func(p path) bool { return failed[p] }, func(p path, d time.Duration) *tally {
			return measure(st, p, func() *tally { return paced(ctx, st, w, p, rate, d) })
		})
		s := Step{Rate: rate, Result: result(t)}
		for p, ps := range []Stats{s.Calibration, s.Proxy, s.Gateway} {
			failed[p] = failed[p] || !Sustains(ps)
		}
		out = append(out, s)
	}
	return out
}
