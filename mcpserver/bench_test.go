package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkAsk is one ask tool call end to end: MCP client and server over
// the in-memory transport, the engine, the Anthropic adapter and the mock on
// 127.0.0.1. Each iteration asks a new question (no dedup hit).
func BenchmarkAsk(b *testing.B) {
	r := newRig(b, []string{"anthropic/claude-sonnet-4-5"}, nil, nil)
	r.cfg.CacheTTL = -1
	cs := r.connect(b, nil, nil)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"prompt": fmt.Sprint("question ", i)}})
		if err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
		<-r.arrived
		<-r.ended
	}
}

// BenchmarkIdempotencyKey is the per-call cost of the dedup key.
func BenchmarkIdempotencyKey(b *testing.B) {
	args, _ := json.Marshal(map[string]any{"prompt": "Summarize the incident report in five bullets.", "max_tokens": 512, "system": "Be brief."})
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "ask", Arguments: args}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := idempotencyKey("ask", req); err != nil {
			b.Fatal(err)
		}
	}
}
