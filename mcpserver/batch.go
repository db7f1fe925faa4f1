package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmguard/llmguard/batch"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/mcpcall"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of batch_summarize.
const (
	// MaxBatchItems bounds the items of one batch_summarize call given as a list.
	MaxBatchItems = 5000
	// maxBatchConcurrency bounds a call's concurrency argument.
	maxBatchConcurrency = 64
)

// BatchInput is batch_summarize's input: a list of texts, or (with
// Config.AllowFiles) a JSON Lines file.
type BatchInput struct {
	Items       []BatchItem `json:"items,omitempty" jsonschema:"the texts to summarize, each with an optional id (default: its position from 1)"`
	Path        string      `json:"path,omitempty" jsonschema:"instead of items: a JSON Lines file (llmguard's {id, text}, OpenAI Batch API or Anthropic Message Batches lines); only when llmguard mcp runs with --allow-files"`
	Out         string      `json:"out,omitempty" jsonschema:"the results file for path (default: beside it, NAME.results.jsonl); only with --allow-files"`
	Bullets     int         `json:"bullets,omitempty" jsonschema:"at most this many bullet points per summary (default 5)"`
	Route       string      `json:"route,omitempty" jsonschema:"route name, provider/model, or a model id a route serves (default: the default route)"`
	Concurrency int         `json:"concurrency,omitempty" jsonschema:"summaries in flight at once (default 8, at most 64)"`
	MaxCostUSD  float64     `json:"max_cost_usd,omitempty" jsonschema:"spend ceiling for this call in US dollars; the items past it stay to do (default: none)"`
}

// BatchItem is one text of batch_summarize.
type BatchItem struct {
	ID   string `json:"id,omitempty" jsonschema:"the item's id in the results (default: its position from 1)"`
	Text string `json:"text" jsonschema:"the text to summarize"`
}

// BatchResult is batch_summarize's structured content.
type BatchResult struct {
	// Out is the results file: one JSON line per item.
	Out string `json:"out"`
	// Total counts the items; DoneBefore those an earlier call did.
	Total      int `json:"total"`
	DoneBefore int `json:"done_before"`
	// Answered and Failed count this call's results; Left the items to do.
	Answered int `json:"answered"`
	Failed   int `json:"failed"`
	Left     int `json:"left"`
	// CostUSD is what this call's answers cost.
	CostUSD float64 `json:"cost_usd"`
}

func (r BatchResult) text() string {
	return fmt.Sprintf("%d of %d summarized into %s (%d answered now, %d done before, %d failed; $%.4f)",
		r.DoneBefore+r.Answered+r.Failed, r.Total, r.Out, r.Answered, r.DoneBefore, r.Failed, r.CostUSD)
}

// batchRuns is which results files this server's calls are writing: a
// call for a file another call writes waits for it to end, then resumes
// the file (a re-issued call answers from what the first one did, and no
// item is sent twice). An entry lives as long as its call.
type batchRuns struct {
	mu      sync.Mutex
	running map[string]chan struct{} // closed when the call writing the file returns
}

// claim waits until no other call of this server writes out and claims it;
// release ends the claim. It fails when ctx ends first.
func (b *batchRuns) claim(ctx context.Context, out string) (release func(), err error) {
	for {
		b.mu.Lock()
		busy, ok := b.running[out]
		if !ok {
			done := make(chan struct{})
			b.running[out] = done
			b.mu.Unlock()
			return func() {
				b.mu.Lock()
				delete(b.running, out)
				b.mu.Unlock()
				close(done)
			}, nil
		}
		b.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: an identical call is still running; call again to see its results", out)
		}
	}
}

func (s *server) addBatchTool() {
	runs := &batchRuns{running: map[string]chan struct{}{}}
	batchSummarize := func(ctx context.Context, req *mcp.CallToolRequest, in BatchInput) (BatchResult, error) {
		return s.batchSummarize(ctx, req, in, runs)
	}
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name: "batch_summarize",
		Description: "Summarize many texts with an LLM into a JSON Lines results file, surviving provider outages: it pauses while every provider refuses " +
			"instead of failing items, and calling it again with the same arguments resumes where it stopped (done items are skipped). " +
			"Returns the results file's path. Progress notifications report each item.",
	}, toolHandler(s, "batch_summarize", batchSummarize))
}

func (s *server) batchSummarize(ctx context.Context, req *mcp.CallToolRequest, in BatchInput, runs *batchRuns) (BatchResult, error) {
	if s.cfg.Engine == nil {
		if s.cfg.ConfigError != "" {
			return BatchResult{}, configError(s.cfg.ConfigError)
		}
		return BatchResult{}, noKeyError(s.cfg.KeyEnv)
	}
	if in.MaxCostUSD < 0 {
		return BatchResult{}, fmt.Errorf("invalid arguments: max_cost_usd is %v; pass a dollar amount above 0, such as 0.50", in.MaxCostUSD)
	}
	input, out, err := s.batchInput(&in)
	if err != nil {
		return BatchResult{}, err
	}
	key, _ := filepath.Abs(out)
	release, err := runs.claim(ctx, key)
	if err != nil {
		return BatchResult{}, err
	}
	defer release()
	route := in.Route
	if route == "" {
		route = s.cfg.Route
	}
	n := in.Bullets
	if n <= 0 {
		n = 5
	}
	p := mcpcall.NewProgress(ctx, req, s.log)
	defer p.Settle(ctx)
	cfg := &batch.Config{Route: route, Resolve: s.cfg.Resolve, Codec: s.cfg.BatchCodec, MaxTokens: s.cfg.MaxTokens,
		Concurrency: min(max(in.Concurrency, 0), maxBatchConcurrency), MaxCost: in.MaxCostUSD,
		Template: fmt.Sprintf("Summarize the following text in at most %d short bullet points. Answer with the bullet points only.\n\n{{.Text}}", n),
		OnEvent:  func(ev batch.Event) { batchProgress(p, ev) }}
	r, err := batch.New(s.cfg.Engine, cfg)
	if err != nil {
		return BatchResult{}, err
	}
	// Stop taking items before the tool's deadline, so those in flight can
	// end; a later call resumes.
	if dl, ok := ctx.Deadline(); ok {
		grace := min(15*time.Second, time.Until(dl)/3)
		t := time.AfterFunc(time.Until(dl)-grace, r.Stop)
		defer t.Stop()
	}
	sum, err := r.Run(ctx, input, out)
	if err != nil {
		return BatchResult{}, batchError(err)
	}
	res := BatchResult{Out: sum.Out, Total: sum.Total, DoneBefore: sum.Skipped, Answered: sum.Served, Failed: sum.Failed,
		Left: sum.Left(), CostUSD: sum.CostUSD}
	if res.Left > 0 {
		why := sum.Stopped
		if why == "interrupted" {
			why = "the tool's deadline came"
		}
		return res, lineError(classify.Line(fmt.Sprintf("%d of %d summarized into %s, %d left: %s; call batch_summarize again with the same arguments to resume",
			res.Total-res.Left, res.Total, res.Out, res.Left, why)))
	}
	return res, nil
}

// batchInput is the call's input and results file.
func (s *server) batchInput(in *BatchInput) (*batch.Input, string, error) {
	switch {
	case in.Path != "" && len(in.Items) > 0:
		return nil, "", errors.New("invalid arguments: pass items or path, not both")
	case in.Path == "" && in.Out != "":
		return nil, "", errors.New("invalid arguments: out goes with path (a list's results file is chosen by llmguard)")
	case in.Path != "" && !s.cfg.AllowFiles:
		return nil, "", errors.New("reading files is off: pass the texts as items, or start llmguard mcp with --allow-files to let tools read and write files")
	case in.Path != "":
		out := in.Out
		if out == "" {
			out = strings.TrimSuffix(in.Path, filepath.Ext(in.Path)) + ".results.jsonl"
		}
		if !strings.HasSuffix(out, ".jsonl") {
			return nil, "", fmt.Errorf("invalid arguments: out %q: a results file ends in .jsonl", out)
		}
		input, err := batch.Open(in.Path)
		if err != nil {
			return nil, "", err
		}
		return input, out, nil
	case len(in.Items) == 0:
		return nil, "", errors.New("invalid arguments: items is empty; pass the texts to summarize")
	case len(in.Items) > MaxBatchItems:
		return nil, "", fmt.Errorf("invalid arguments: %d items, at most %d per call; split the list, or write a file and use path with --allow-files", len(in.Items), MaxBatchItems)
	}
	var lines bytes.Buffer
	enc := json.NewEncoder(&lines)
	for i, it := range in.Items {
		id := it.ID
		if id == "" {
			id = strconv.Itoa(i + 1)
		}
		if err := enc.Encode(map[string]string{"id": id, "text": it.Text}); err != nil {
			return nil, "", err
		}
	}
	// The results file is named by what is asked, so a call made again
	// (a client re-issues a call after a broken stream) resumes it.
	sum := sha256.New()
	fmt.Fprintf(sum, "%d\x00%s\x00", in.Bullets, in.Route)
	sum.Write(lines.Bytes())
	dir := s.cfg.BatchDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "llmguard-batch")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("batch directory: %w", err)
	}
	out := filepath.Join(dir, "summaries-"+hex.EncodeToString(sum.Sum(nil))[:16]+".jsonl")
	input, err := batch.Read("items", lines.Bytes())
	if err != nil {
		return nil, "", fmt.Errorf("invalid arguments: %w", err)
	}
	return input, out, nil
}

// batchError is a run that could not start, as one line.
func batchError(err error) error {
	switch {
	case errors.Is(err, batch.ErrBusy):
		return lineError(classify.Line(err.Error() + ": another program (llmguard batch, or another llmguard mcp) is running it; call again once it ends"))
	case errors.As(err, new(*batch.ResolveError)):
		return lineError(classify.Line(err.Error() + "; pass a route from llmguard's config or a provider/model target"))
	}
	return err
}

// batchProgress turns a run's events into progress notifications: one per
// item, and each pause, resume and stop.
func batchProgress(p *mcpcall.Progress, ev batch.Event) {
	if !p.Active() {
		return
	}
	pr := ev.Progress
	done := pr.Skipped + pr.Served + pr.Failed
	msg := ""
	switch ev.Kind {
	case batch.EventItem:
		rec := ev.Record
		switch rec.Status {
		case batch.StatusOK:
			msg = fmt.Sprintf("%s summarized by %s", rec.ID, rec.Target)
		case batch.StatusFailed:
			msg = fmt.Sprintf("%s failed: %s", rec.ID, rec.Error)
		default:
			msg = rec.ID + " canceled; it is done on the next call"
		}
	case batch.EventPause:
		msg = "paused: " + ev.Reason
		if !ev.Until.IsZero() {
			msg = fmt.Sprintf("paused until %s: %s", ev.Until.UTC().Format(time.RFC3339), ev.Reason)
		}
	case batch.EventResume:
		msg = "resumed: " + ev.Reason
	case batch.EventStop:
		msg = "stopping: " + ev.Reason
	case batch.EventWarn:
		msg = "warning: " + ev.Reason
	}
	p.Step(classify.Line(msg), done, pr.Total)
}
