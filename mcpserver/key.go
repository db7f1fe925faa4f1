package mcpserver

import (
	"encoding/json"

	"github.com/llmguard/llmguard/internal/mcpcall"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// idempotencyKey is the dedup key of an LLM tool call: mcpcall.Key of the
// tool name and the call's arguments.
func idempotencyKey(tool string, req *mcp.CallToolRequest) (string, error) {
	var raw json.RawMessage
	if req != nil && req.Params != nil {
		raw = req.Params.Arguments
	}
	return mcpcall.Key(tool, raw)
}
