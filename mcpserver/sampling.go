package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SamplingProvider is the provider name of the "mcp/sampling" target.
const SamplingProvider = catalog.SamplingProvider

// samplingInputID names the sampling input request in a tool result.
const samplingInputID = "llmguard-sampling"

// SamplingAdapter is the provider.Adapter of the target "mcp/sampling", the
// last line of defence of a route: the connected MCP client's own model.
//
// It works through MCP's multi round-trip requests, so it serves clients of
// every protocol version: reached by the engine during a tool call whose
// client offers sampling, Chat fails with a verdict carrying the sampling
// request; the tool returns it as an input request (the SDK asks older
// clients itself through sampling/createMessage); the client's answer comes
// back with the retried tool call, which returns it labelled as the client's
// model's. With no session, or a client without the sampling capability,
// Chat fails at once with a verdict that lets the engine move on and that
// counts against no breaker. The zero value is ready to use and safe for
// concurrent use.
type SamplingAdapter struct {
	// MaxTokens is the answer budget when the request has none (0 = DefaultMaxTokens).
	MaxTokens int
}

// Name returns "mcp".
func (*SamplingAdapter) Name() string { return SamplingProvider }

// samplingNeeded carries the sampling request out of the engine to the
// tool handler.
type samplingNeeded struct {
	//lint:ignore SA1019 sampling is deprecated in MCP 2026-07-28 but kept for clients that still advertise it (docs/decisions.md)
	params *mcp.CreateMessageParams
}

func (*samplingNeeded) Error() string { return "asking the MCP client's own model" }

// Chat returns the client's answer when the retried tool call carries it,
// and otherwise fails with the sampling request (or at once when the client
// can't sample).
func (a *SamplingAdapter) Chat(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	ss := SessionFrom(ctx)
	if ss == nil {
		return nil, samplingError("no MCP client session for this call", nil)
	}
	ip := ss.InitializeParams()
	//lint:ignore SA1019 sampling is deprecated in MCP 2026-07-28 but kept for clients that still advertise it (docs/decisions.md)
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Sampling == nil {
		return nil, samplingError("the MCP client does not offer sampling", nil)
	}
	//lint:ignore SA1019 sampling is deprecated in MCP 2026-07-28 but kept for clients that still advertise it (docs/decisions.md)
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
		//lint:ignore SA1019 sampling is deprecated in MCP 2026-07-28 but kept for clients that still advertise it (docs/decisions.md)
		p.Messages = append(p.Messages, &mcp.SamplingMessage{Role: role, Content: &mcp.TextContent{Text: strings.Join(text, "\n")}})
	}
	e := samplingError("asking the MCP client's own model", &samplingNeeded{params: p})
	return nil, e
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
			Scope:        classify.ScopeRequest, // about this call's client: no breaker counts it
			Fallback:     true,
			ProviderType: "mcp_sampling",
			Message:      "mcp/sampling: " + msg,
		},
	}
}

// samplingState is what a tool result asking for sampling remembers of the
// failed route, echoed back by the client in RequestState.
type samplingState struct {
	Attempts  int `json:"attempts"`
	Fallbacks int `json:"fallbacks"`
}

// askClient turns an engine failure that reached mcp/sampling into a tool
// result asking the client's model; nil when err is no such failure.
func askClient(err error) *mcp.CallToolResult {
	sn, ok := errors.AsType[*samplingNeeded](err)
	if !ok {
		return nil
	}
	st := samplingState{}
	if re, ok := errors.AsType[*resilience.RouteError](err); ok {
		st.Attempts = len(re.Attempts)
		for i := 1; i < len(re.Attempts); i++ {
			if re.Attempts[i].Target != re.Attempts[i-1].Target {
				st.Fallbacks++
			}
		}
	}
	b, _ := json.Marshal(st)
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{samplingInputID: sn.params}, RequestState: string(b)}
}

// clientAnswer is the client model's answer carried by a retried tool call,
// or nil when the call carries none.
func clientAnswer(req *mcp.CallToolRequest) (*Answer, error) {
	if req == nil || req.Params == nil || req.Params.InputResponses == nil {
		return nil, nil
	}
	resp, ok := req.Params.InputResponses[samplingInputID]
	if !ok {
		return nil, nil
	}
	var model, text string
	var contents []mcp.Content
	switch r := resp.(type) {
	//lint:ignore SA1019 sampling is deprecated in MCP 2026-07-28 but kept for clients that still advertise it (docs/decisions.md)
	case *mcp.CreateMessageWithToolsResult:
		model, contents = r.Model, r.Content
	//lint:ignore SA1019 sampling is deprecated in MCP 2026-07-28 but kept for clients that still advertise it (docs/decisions.md)
	case *mcp.CreateMessageResult:
		model, contents = r.Model, []mcp.Content{r.Content}
	default:
		return nil, fmt.Errorf("mcp/sampling: the client answered the sampling request with %T", resp)
	}
	for _, c := range contents {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if text == "" {
		return nil, errors.New("mcp/sampling: the client's model answered with no text; every configured provider failed, run llm_status to see why")
	}
	if model == "" {
		model = "client-model"
	}
	var st samplingState
	json.Unmarshal([]byte(req.Params.RequestState), &st) // informational only
	return &Answer{
		Text:        fmt.Sprintf("[answered by the MCP client's own model (%s) through sampling: every configured provider failed]\n%s", model, text),
		Model:       SamplingProvider + "/" + model,
		Attempts:    max(st.Attempts, 1),
		Fallbacks:   st.Fallbacks,
		ClientModel: true,
	}, nil
}
