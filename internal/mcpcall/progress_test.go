package mcpcall_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmguard/llmguard/internal/mcpcall"
)

// Step reports done of total; a note that does not advance done (a pause
// between two items) still gets a progress above the last one, below the
// next whole step, as the protocol's "progress MUST increase" asks.
func TestProgressStep(t *testing.T) {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "steps"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		p := mcpcall.NewProgress(ctx, req, nil)
		p.Step("item 1", 1, 3)
		p.Step("paused", 1, 3)
		p.Step("still paused", 1, 3)
		p.Step("item 2", 2, 3)
		p.Step("item 3", 3, 3)
		p.Settle(ctx)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params)
			mu.Unlock()
		}})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "steps", Arguments: map[string]any{}}
	params.SetProgressToken("t")
	if _, err := cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 1.5, 1.75, 2, 3}
	steps := []string{"item 1", "paused", "still paused", "item 2", "item 3"}
	// The Go client hands notifications to their handler in goroutines of
	// their own, so the result can be read before the last of them ran.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// Nor are those goroutines ordered: put the notifications in the order
	// of their progress, and check each one's message is the step that
	// progress was computed for.
	sort.Slice(got, func(i, j int) bool { return got[i].Progress < got[j].Progress })
	if len(got) != len(want) {
		t.Fatalf("%d notifications, want %d: %+v", len(got), len(want), got)
	}
	for i, p := range got {
		if p.Progress != want[i] || p.Total != 3 || p.Message != steps[i] {
			t.Errorf("notification %d (%s): progress %v of %v, want %v of 3", i, p.Message, p.Progress, p.Total, want[i])
		}
	}
}
