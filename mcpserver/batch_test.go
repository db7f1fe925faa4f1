package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmguard/llmguard/mock"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// notes records progress notifications (message, progress, total).
type notes struct {
	mu  sync.Mutex
	got []*mcp.ProgressNotificationParams
}

func (n *notes) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.got = append(n.got, req.Params)
	}}
}

func (n *notes) all() []*mcp.ProgressNotificationParams {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*mcp.ProgressNotificationParams(nil), n.got...)
}

// resultLines decodes a results file: id → status.
func resultLines(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct{ ID, Status, Answer string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if _, dup := out[r.ID]; dup {
			t.Errorf("id %s twice", r.ID)
		}
		out[r.ID] = r.Status
		if r.Status == "ok" && !strings.HasPrefix(r.Answer, "Summary:") {
			t.Errorf("id %s: answer %q", r.ID, r.Answer)
		}
	}
	return out
}

// batch_summarize over a list writes a results file, reports progress per
// item and returns the file's path; the same call again resumes it: the
// items done are not sent again.
func TestBatchSummarizeList(t *testing.T) {
	r := newRig(t, []string{"anthropic/claude-sonnet-4-5"}, nil, nil)
	r.cfg.BatchDir = t.TempDir()
	var n notes
	cs := r.connect(t, n.options(), nil)
	args := map[string]any{"items": []map[string]string{
		{"id": "a", "text": "The first document says the deploy failed."},
		{"text": "The second one says it worked."},
		{"id": "c", "text": "The third says nothing at all."},
	}, "bullets": 3}
	res := callOK(t, cs, "batch_summarize", args, "batch-1")
	sc := structured(t, res)
	out, _ := sc["out"].(string)
	if filepath.Dir(out) != r.cfg.BatchDir || sc["answered"] != 3.0 || sc["left"] != 0.0 || !strings.Contains(text(t, res), out) {
		t.Fatalf("result %v: %s", sc, text(t, res))
	}
	if got := resultLines(t, out); len(got) != 3 || got["a"] != "ok" || got["2"] != "ok" || got["c"] != "ok" {
		t.Errorf("results %v", got)
	}
	items := 0
	for _, p := range n.all() {
		if strings.Contains(p.Message, "summarized by anthropic/claude-sonnet-4-5") {
			items++
			if p.Total != 3 || p.Progress < 1 || p.Progress > 3 {
				t.Errorf("notification %+v: want progress of 3", p)
			}
		}
	}
	if items != 3 {
		t.Errorf("%d item notifications, want 3: %+v", items, n.all())
	}
	sent := len(r.upstream())

	res = callTool(t, cs, "batch_summarize", args)
	if sc := structured(t, res); res.IsError || sc["out"] != out || sc["done_before"] != 3.0 || sc["answered"] != 0.0 {
		t.Errorf("again: %v %s", sc, text(t, res))
	}
	if len(r.upstream()) != sent {
		t.Errorf("the same call again sent %d requests", len(r.upstream())-sent)
	}
}

// A file path needs --allow-files; with it, results go beside the file.
func TestBatchSummarizeFile(t *testing.T) {
	r := newRig(t, []string{"openai/gpt-4.1"}, nil, nil)
	dir := t.TempDir()
	in := filepath.Join(dir, "docs.jsonl")
	if err := os.WriteFile(in, []byte(`{"id":"x","text":"one"}`+"\n"+`{"id":"y","text":"two"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := r.connect(t, nil, nil)
	line := errorLine(t, callTool(t, cs, "batch_summarize", map[string]any{"path": in}))
	if !strings.Contains(line, "--allow-files") {
		t.Errorf("without --allow-files: %q", line)
	}
	r.cfg.AllowFiles = true
	cs = r.connect(t, nil, nil)
	res := callTool(t, cs, "batch_summarize", map[string]any{"path": in})
	if res.IsError {
		t.Fatalf("batch_summarize: %s", text(t, res))
	}
	want := filepath.Join(dir, "docs.results.jsonl")
	if sc := structured(t, res); sc["out"] != want || sc["answered"] != 2.0 {
		t.Errorf("result %v, want out %s", sc, want)
	}
	if got := resultLines(t, want); len(got) != 2 {
		t.Errorf("results %v", got)
	}
	line = errorLine(t, callTool(t, cs, "batch_summarize", map[string]any{"path": in, "out": filepath.Join(dir, "notes.txt")}))
	if !strings.Contains(line, ".jsonl") {
		t.Errorf("out without .jsonl: %q", line)
	}
}

// A bad key on the route stops the batch with one line naming the results
// file and how to resume.
func TestBatchSummarizeStopsOnBadKey(t *testing.T) {
	r := newRig(t, []string{"anthropic/claude-sonnet-4-5+fault=bad_key"}, nil, nil)
	r.cfg.BatchDir = t.TempDir()
	cs := r.connect(t, nil, nil)
	line := errorLine(t, callTool(t, cs, "batch_summarize", map[string]any{"items": []map[string]string{{"text": "a"}, {"text": "b"}}}))
	for _, want := range []string{"0 of 2 summarized into " + r.cfg.BatchDir, "401", "call batch_summarize again"} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
}

// A client re-issues a call after a broken stream, so the same call
// arrives while the first still runs: the second waits for it and answers
// from the same results file, and no item is sent twice.
func TestBatchSummarizeDuplicateCall(t *testing.T) {
	sc := &mock.Scenario{Name: "slow", Rules: []mock.Rule{{Latency: mock.Latency{Fixed: 300 * time.Millisecond}}}}
	r := newRigScenario(t, sc, []string{"anthropic/claude-sonnet-4-5"}, nil, nil)
	r.cfg.BatchDir = t.TempDir()
	cs := r.connect(t, nil, nil)
	args := map[string]any{"items": []map[string]string{{"text": "one"}, {"text": "two"}, {"text": "three"}}, "concurrency": 1}
	first := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "batch_summarize", Arguments: args})
		if err != nil {
			t.Error(err)
		}
		first <- res
	}()
	<-r.arrived // the first call is running
	second := callTool(t, cs, "batch_summarize", args)
	for i, res := range []*mcp.CallToolResult{<-first, second} {
		if res == nil || res.IsError {
			t.Fatalf("call %d failed: %s", i+1, text(t, res))
		}
		if sc := structured(t, res); sc["left"] != 0.0 || sc["total"] != 3.0 {
			t.Errorf("call %d: %v", i+1, sc)
		}
	}
	if n := len(r.upstream()); n != 3 {
		t.Errorf("%d upstream requests for 3 items", n)
	}
}

// max_cost_usd is the whole batch's ceiling: past it the call stops, says
// so in one line, and the same call with a higher ceiling resumes.
func TestBatchSummarizeMaxCost(t *testing.T) {
	r := newRig(t, []string{"anthropic/claude-sonnet-4-5"}, nil, nil)
	r.cfg.BatchDir = t.TempDir()
	cs := r.connect(t, nil, nil)
	items := []map[string]string{{"text": "one"}, {"text": "two"}, {"text": "three"}}
	line := errorLine(t, callTool(t, cs, "batch_summarize", map[string]any{"items": items, "concurrency": 1, "max_cost_usd": 0.0001}))
	for _, want := range []string{"1 of 3 summarized", "2 left", "spend ceiling of $0.0001 reached"} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
	res := callTool(t, cs, "batch_summarize", map[string]any{"items": items, "concurrency": 1, "max_cost_usd": 1})
	if sc := structured(t, res); res.IsError || sc["done_before"] != 1.0 || sc["answered"] != 2.0 {
		t.Errorf("again with a higher ceiling: %v %s", sc, text(t, res))
	}
	if n := len(r.upstream()); n != 3 {
		t.Errorf("%d upstream requests for 3 items", n)
	}
	line = errorLine(t, callTool(t, cs, "batch_summarize", map[string]any{"items": items, "max_cost_usd": -1}))
	if !strings.Contains(line, "max_cost_usd") {
		t.Errorf("negative ceiling: %q", line)
	}
}
