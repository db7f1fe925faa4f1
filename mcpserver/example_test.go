package mcpserver_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/llmguard/llmguard/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server with no engine (no provider key) still lists its tools; its LLM
// tools answer one line saying what to set. Production code passes an
// Engine from resilience.New and serves &mcp.StdioTransport{}.
func ExampleNew() {
	ctx := context.Background()
	srv := mcpserver.New(&mcpserver.Config{Logger: slog.New(slog.DiscardHandler)})

	clientT, serverT := mcp.NewInMemoryTransports()
	ss, _ := srv.Connect(ctx, serverT, nil)
	defer ss.Wait()
	cs, _ := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, clientT, nil)
	defer cs.Close()

	tools, _ := cs.ListTools(ctx, nil)
	for _, t := range tools.Tools {
		fmt.Println(t.Name)
	}
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "decode_error", Arguments: map[string]any{
		"status": 401, "provider": "anthropic",
		"body": `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`}})
	fmt.Println(res.StructuredContent.(map[string]any)["class"])
	// Output:
	// ask
	// batch_summarize
	// chat
	// decode_error
	// llm_status
	// summarize
	// auth
}
