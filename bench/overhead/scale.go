package overhead

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/llmguard/llmguard/internal/defaults"
)

// This file: the scaling table — what each path costs as the work grows:
// longer prompts, longer streams, more connections.

// Groups of the scaling table, in order.
const (
	GroupBody   = "body"   // request bodies of 1 KB to 512 KB, same dialect and across
	GroupStream = "stream" // streams of 10 to 1,000 chunks
	GroupConns  = "conns"  // 1 to 256 concurrent connections
	GroupMemory = "memory" // the resident set after a burst of 512 KB requests (burst.go)
)

// ScaleConfig is one scaling run; the zero value runs every row for 1.5s.
type ScaleConfig struct {
	// Duration is each row's measurement, the three paths together
	// (0 = 1.5s; a row also warms up: each path first has as many requests at the upstream at once as the row has
	// clients, so it opens every connection it will use, then 0.1s of the load; the run starts the proxy's and the gateway's processes once).
	Duration time.Duration
	// Groups lists the groups to run (nil: all; GroupMemory is the burst,
	// not rows).
	Groups []string
	// Progress, when set, gets a line as each row starts.
	Progress io.Writer
	// Spawn starts the proxy's and the gateway's processes (nil: SpawnSelf).
	Spawn Spawn
	// Settle is how long after the memory group's burst its resident set
	// is read again (0 = 10s, issue 19's bound).
	Settle time.Duration
}

// Row is one line of the scaling table.
type Row struct {
	Group string
	// Case names the row ("128 KB, anthropic → openai").
	Case string
	// BodyBytes is the request body's size; Concurrency the clients.
	BodyBytes, Concurrency int
	Result
}

// Scaling is a scaling run's rows.
type Scaling struct {
	Machine Machine
	Rows    []Row
	// Burst is the memory group's burst (nil when it did not run).
	Burst   *Burst
	Elapsed time.Duration
}

// rowSpec is a row to measure: its load.
type rowSpec struct {
	group, name string
	conns       int
	work        *workload
}

// rows lists every row of the table.
func rows() []rowSpec {
	var out []rowSpec
	for _, kb := range []int{1, 32, 128, 512} {
		for _, v := range []struct{ from, to, route string }{
			{"openai", "openai", "default"}, {"anthropic", "anthropic", "claude"}, {"anthropic", "openai", "default"},
		} {
			api, model := "/v1/chat/completions", "gpt-4o"
			if v.from == "anthropic" {
				api, model = "/v1/messages", "claude-sonnet-4-5"
			}
			w := &workload{urlPath: forPaths(api, api),
				body: forPaths(conversation(v.from, model, kb<<10), conversation(v.from, v.route, kb<<10))}
			out = append(out, rowSpec{group: GroupBody, name: fmt.Sprintf("%d KB, %s → %s", kb, v.from, v.to), conns: 2, work: w})
		}
	}
	for _, n := range chunkCounts {
		out = append(out, rowSpec{group: GroupStream, name: fmt.Sprintf("%d chunks", n), conns: 2, work: chat(true, n)})
	}
	for _, c := range []int{1, 16, 64, 256} {
		out = append(out, rowSpec{group: GroupConns, name: fmt.Sprintf("%d connections", c), conns: c, work: chat(false, 0)})
	}
	return out
}

// Scale measures every row of the scaling table on the three paths,
// interleaved in two rounds, all on one stack on 127.0.0.1 (the rows in
// order: the pools the 256 connections leave behind come last). It returns
// the rows measured and an error joining those whose requests failed.
func Scale(ctx context.Context, c *ScaleConfig) (*Scaling, error) {
	cfg := defaults.Copy(c)
	if cfg.Duration <= 0 {
		cfg.Duration = 1500 * time.Millisecond
	}
	defaults.Positive(&cfg.Settle, 10*time.Second)
	t0 := time.Now()
	out := &Scaling{Machine: thisMachine()}
	st, err := newStack(spawner(cfg.Spawn))
	if err != nil {
		return nil, err
	}
	defer st.close()
	var errs []error
	if cfg.Groups == nil || slices.Contains(cfg.Groups, GroupMemory) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "scaling: a burst of %d requests of 512 KB\n", burstClients*burstEach)
		}
		var err error
		out.Burst, err = burst(ctx, st, cfg.Settle)
		errs = append(errs, err)
	}
	for _, r := range rows() {
		if cfg.Groups != nil && !slices.Contains(cfg.Groups, r.group) {
			continue
		}
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "scaling: %s\n", r.name)
		}
		row, err := measureRow(ctx, st, &r, cfg.Duration)
		out.Rows = append(out.Rows, *row)
		errs = append(errs, err)
	}
	out.Elapsed = time.Since(t0)
	return out, errors.Join(errs...)
}

func measureRow(ctx context.Context, st *stack, r *rowSpec, d time.Duration) (*Row, error) {
	warm(ctx, st, r.work, r.conns)
	const rounds = 2
	t := interleave(rounds, d/(rounds*time.Duration(npaths)), nil, func(p path, d time.Duration) *tally {
		return measure(st, p, func() *tally { return closed(ctx, st, r.work, p, r.conns, d) })
	})
	var errs []error
	for p := range npaths {
		errs = append(errs, t[p].err(r.name, p))
	}
	return &Row{Group: r.group, Case: r.name, BodyBytes: len(r.work.body[direct]), Concurrency: r.conns, Result: result(t)},
		errors.Join(errs...)
}
