package batch

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// fakeEngine answers by the prompt: "block…" waits for the call's context,
// "reject…" fails as invalid, anything else is answered at $0.01.
type fakeEngine struct {
	calls  atomic.Int64
	reject atomic.Bool // "reject" prompts fail (else they are answered)
	wasted float64     // each answer's wasted cost (failed attempts billed)
	onCall func(n int64)
}

func (f *fakeEngine) Chat(ctx context.Context, c *resilience.Call) (*resilience.Result, error) {
	if n := f.calls.Add(1); f.onCall != nil {
		f.onCall(n)
	}
	text := c.Request.Messages[0].Content[0].Text
	switch {
	case strings.HasPrefix(text, "block"):
		<-ctx.Done()
		return nil, &resilience.RouteError{Route: c.Route, Err: resilience.ErrDeadline}
	case strings.HasPrefix(text, "reject") && f.reject.Load():
		pe := &provider.Error{Provider: "fake", Model: "m", Verdict: classify.Verdict{Status: 400, Class: classify.InvalidRequest,
			Scope: classify.ScopeRequest, Message: "400 invalid_request_error: no such thing"}}
		return nil, &resilience.RouteError{Route: c.Route, Err: resilience.ErrRejected, Attempts: []resilience.AttemptError{{Target: "fake/m", Err: pe}}}
	}
	return &resilience.Result{Response: &provider.Response{Text: "answer to " + text, Model: "m"}, Target: "fake/m", Attempts: 1, Cost: 0.01, Wasted: f.wasted}, nil
}

func prompts(texts ...string) []string {
	lines := make([]string, len(texts))
	for i, s := range texts {
		lines[i] = `{"id":"p` + string(rune('a'+i)) + `","prompt":"` + s + `"}`
	}
	return lines
}

// statusOf maps each id to its records' statuses, in order.
func statusOf(t *testing.T, out string) map[string][]string {
	m := map[string][]string{}
	for _, r := range readResults(t, out) {
		m[r["id"].(string)] = append(m[r["id"].(string)], r["status"].(string))
	}
	return m
}

// eachOKOnce checks that the results file out holds exactly one record
// per id, each ok.
func eachOKOnce(t *testing.T, out string) {
	t.Helper()
	for id, s := range statusOf(t, out) {
		if len(s) != 1 || s[0] != "ok" {
			t.Errorf("%s: %v", id, s)
		}
	}
}

// Cancelling the run's context (a second Ctrl-C) aborts the items in
// flight: each is recorded as canceled; the next run sends them again and
// the file ends with exactly one record per id.
func TestAbortThenResume(t *testing.T) {
	eng := &fakeEngine{}
	in := writeLines(t, "items.jsonl", prompts("one", "two", "three", "block four", "block five"))
	out := filepath.Join(t.TempDir(), "results.jsonl")
	input, _ := Open(in)
	ctx, cancel := context.WithCancel(context.Background())
	answered := 0
	r, _ := New(eng, &Config{Concurrency: 5, OnEvent: func(ev Event) {
		if ev.Kind == EventItem && ev.Record.Status == StatusOK {
			if answered++; answered == 3 {
				cancel()
			}
		}
	}})
	sum, err := r.Run(ctx, input, out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Served != 3 || sum.Canceled != 2 || sum.Left() != 2 || sum.Stopped != "aborted" {
		t.Fatalf("summary: %+v", sum)
	}
	st := statusOf(t, out)
	if st["pd"][0] != "canceled" || st["pe"][0] != "canceled" {
		t.Fatalf("records: %v", st)
	}
	// The next run (the prompts no longer block) does the two again.
	in2 := writeLines(t, "items.jsonl", prompts("one", "two", "three", "four", "five"))
	sum = run(t, eng, in2, out, nil)
	if sum.Skipped != 3 || sum.Served != 2 || sum.Left() != 0 {
		t.Fatalf("resumed: %+v", sum)
	}
	eachOKOnce(t, out)
}

// Stop takes no new item and waits for those in flight: nothing is
// canceled, the rest stays to do.
func TestStop(t *testing.T) {
	eng := &fakeEngine{}
	in := writeLines(t, "items.jsonl", ownItems(50))
	out := filepath.Join(t.TempDir(), "results.jsonl")
	input, _ := Open(in)
	r, _ := New(eng, &Config{Concurrency: 2})
	eng.onCall = func(n int64) {
		if n == 5 {
			r.Stop() // while this call and at most one other are in flight
		}
	}
	sum, err := r.Run(context.Background(), input, out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Canceled != 0 || sum.Served < 5 || sum.Served > 6 || sum.Stopped != "interrupted" || sum.Left() != 50-sum.Served {
		t.Fatalf("summary: %+v", sum)
	}
	if n := len(readResults(t, out)); n != sum.Served {
		t.Errorf("%d records, %d served", n, sum.Served)
	}
}

// Failed items are skipped by a rerun, and sent again with RetryFailed;
// their old records go, so each id keeps one.
func TestRetryFailed(t *testing.T) {
	eng := &fakeEngine{}
	eng.reject.Store(true)
	in := writeLines(t, "items.jsonl", prompts("one", "reject two", "three"))
	out := filepath.Join(t.TempDir(), "results.jsonl")
	if sum := run(t, eng, in, out, nil); sum.Failed != 1 || sum.FailedByClass["invalid_request"] != 1 {
		t.Fatalf("first run: %+v", sum)
	}
	if sum := run(t, eng, in, out, nil); sum.Skipped != 3 || eng.calls.Load() != 3 {
		t.Fatalf("rerun: %+v after %d calls", sum, eng.calls.Load())
	}
	eng.reject.Store(false)
	if sum := run(t, eng, in, out, &Config{RetryFailed: true}); sum.Skipped != 2 || sum.Served != 1 {
		t.Fatalf("retry: %+v", sum)
	}
	eachOKOnce(t, out)
}

// A last line cut off by a crash mid-write is dropped: its item runs again.
func TestTruncatedLastLine(t *testing.T) {
	eng := &fakeEngine{}
	in := writeLines(t, "items.jsonl", prompts("one", "two", "three"))
	out := filepath.Join(t.TempDir(), "results.jsonl")
	run(t, eng, in, out, nil)
	b := []byte(readFile(t, out))
	cut := b[:len(b)-20] // the last record loses its end and its newline
	if err := os.WriteFile(out, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := run(t, eng, in, out, nil)
	if sum.Skipped != 2 || sum.Served != 1 {
		t.Fatalf("summary: %+v", sum)
	}
	if st := statusOf(t, out); len(st) != 3 {
		t.Errorf("records: %v", st)
	}
}

// A second run on the same results file at once is refused.
func TestBusy(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.jsonl")
	held, err := openResults(out, FormatLLMGuard, false)
	if err != nil {
		t.Fatal(err)
	}
	defer held.close()
	input, _ := Open(writeLines(t, "items.jsonl", ownItems(1)))
	r, _ := New(&fakeEngine{}, nil)
	if _, err := r.Run(context.Background(), input, out); !errors.Is(err, ErrBusy) {
		t.Errorf("err = %v, want ErrBusy", err)
	}
}

// MaxCost: one item alone until the first answer tells the cost, then no
// item once spent plus in flight plus the next would pass the ceiling.
func TestMaxCost(t *testing.T) {
	eng := &fakeEngine{}
	in := writeLines(t, "items.jsonl", ownItems(20))
	out := filepath.Join(t.TempDir(), "results.jsonl")
	var evs events
	sum := run(t, eng, in, out, &Config{Concurrency: 4, MaxCost: 0.035, OnEvent: evs.add})
	if sum.Served != 3 || sum.CostUSD > 0.035 || sum.Left() != 17 || !strings.HasPrefix(sum.Stopped, "spend ceiling of $0.0350 reached") {
		t.Fatalf("summary: %+v", sum)
	}
	if stops := evs.of(EventStop); len(stops) != 1 {
		t.Errorf("stop events: %v", stops)
	}
}

// A results file that cannot be written stops the run: the answers whose
// record did not reach the disk are not done (a later run does them), and
// what they cost is the summary's wasted cost.
func TestWriteFailure(t *testing.T) {
	eng := &fakeEngine{}
	in, err := Open(writeLines(t, "items.jsonl", ownItems(10)))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "results.jsonl")
	r, err := New(eng, &Config{Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	eng.onCall = func(n int64) {
		if n == 3 {
			r.out.f.Close() // the disk goes away before the third answer is written
		}
	}
	sum, err := r.Run(t.Context(), in, out)
	if err == nil || !strings.Contains(err.Error(), "file already closed") {
		t.Fatalf("err = %v", err)
	}
	if sum.Served != 2 || sum.Left() != 8 || sum.WastedCostUSD < 0.01 || !strings.HasPrefix(sum.Stopped, "writing the results failed") {
		t.Fatalf("summary: %+v", sum)
	}
	if recs := readResults(t, out); len(recs) != 2 {
		t.Errorf("%d records on disk, want 2", len(recs))
	}
}

// What failed attempts cost (the engine's Wasted) is the summary's wasted
// cost, and counts against the spend ceiling: $0.015 spent per item under
// a $0.045 ceiling is three items (counting answers alone it was four).
func TestWastedCost(t *testing.T) {
	eng := &fakeEngine{wasted: 0.005}
	in := writeLines(t, "items.jsonl", ownItems(10))
	sum := run(t, eng, in, filepath.Join(t.TempDir(), "results.jsonl"), &Config{Concurrency: 1})
	if sum.Served != 10 || math.Abs(sum.WastedCostUSD-0.05) > 1e-9 {
		t.Errorf("summary: %+v, want $0.05 wasted", sum)
	}
	sum = run(t, eng, in, filepath.Join(t.TempDir(), "results.jsonl"), &Config{Concurrency: 1, MaxCost: 0.045})
	if sum.Served != 3 || !strings.Contains(sum.Stopped, "$0.0450 spent") {
		t.Errorf("summary: %+v, want 3 served and $0.0450 spent", sum)
	}
}
