package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SamplingProvider is the provider name of the "mcp/sampling" target.
const SamplingProvider = "mcp"

// samplingMaxProtocol: from protocol 2026-07-28 on, a server may no longer
// send sampling/createMessage while serving a request (SEP-2322).
const samplingMaxProtocol = "2026-07-28"

// SamplingAdapter is the provider.Adapter of the target "mcp/sampling", the
// last line of defence of a route: it asks the connected MCP client's own
// model through sampling/createMessage. The session comes from the tool
// call's context; with no session, or a client without the sampling
// capability, Chat fails at once with a verdict that lets the engine move
// on. The zero value is ready to use and safe for concurrent use.
type SamplingAdapter struct {
	// MaxTokens is the answer budget when the request has none (0 = DefaultMaxTokens).
	MaxTokens int
}

// Name returns "mcp".
func (*SamplingAdapter) Name() string { return SamplingProvider }

// Chat asks the client's model. The response's Provider is "mcp" and its
// Model is the model the client reports.
func (a *SamplingAdapter) Chat(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	ss := SessionFrom(ctx)
	if ss == nil {
		return nil, samplingError("no MCP client session for this call", nil)
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Sampling == nil {
		return nil, samplingError("the MCP client does not offer sampling", nil)
	}
	if ip.ProtocolVersion >= samplingMaxProtocol {
		return nil, samplingError("the MCP client's protocol "+ip.ProtocolVersion+" has no server-initiated sampling", nil)
	}
	p := &mcp.CreateMessageParams{SystemPrompt: req.System, MaxTokens: int64(req.MaxTokens), StopSequences: req.Stop}
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultMaxTokens
		if a != nil && a.MaxTokens > 0 {
			p.MaxTokens = int64(a.MaxTokens)
		}
	}
	if req.Temperature != nil {
		p.Temperature = *req.Temperature
	}
	for _, m := range req.Messages {
		var text []string
		for _, part := range m.Content {
			switch part.Type {
			case provider.PartText:
				text = append(text, part.Text)
			case provider.PartToolResult:
				if part.ToolResult != nil {
					text = append(text, part.ToolResult.Content)
				}
			}
		}
		role := mcp.Role("user")
		if m.Role == provider.RoleAssistant {
			role = "assistant"
		}
		p.Messages = append(p.Messages, &mcp.SamplingMessage{Role: role, Content: &mcp.TextContent{Text: strings.Join(text, "\n")}})
	}
	res, err := ss.CreateMessage(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return nil, samplingError("sampling cancelled", ctx.Err())
		}
		return nil, samplingError("the client's sampling failed: "+oneLine(err.Error()), err)
	}
	out := &provider.Response{Provider: SamplingProvider, Model: res.Model, FinishReason: provider.FinishStop}
	if out.Model == "" {
		out.Model = "client-model"
	}
	switch c := res.Content.(type) {
	case *mcp.TextContent:
		out.Text = c.Text
	default:
		return nil, samplingError(fmt.Sprintf("the client's model answered with %T, not text", res.Content), nil)
	}
	if res.StopReason == "maxTokens" {
		out.FinishReason = provider.FinishLength
	}
	return out, nil
}

// Stream is not offered by sampling; it fails with a verdict that lets the
// engine move on.
func (*SamplingAdapter) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	return nil, samplingError("sampling does not stream", errors.ErrUnsupported)
}

func samplingError(msg string, err error) *provider.Error {
	return &provider.Error{
		Provider: SamplingProvider,
		Model:    "sampling",
		Err:      err,
		Verdict: classify.Verdict{
			Class:        classify.Unknown,
			Scope:        classify.ScopeProvider,
			Fallback:     true,
			ProviderType: "mcp_sampling",
			Message:      "mcp/sampling: " + msg,
		},
	}
}
