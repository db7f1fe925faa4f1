package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/wire"
)

// Dialect is the value of provider.Request.Dialect for requests that arrived
// in the Anthropic Messages format; their Extra fields are sent unchanged.
const Dialect = "anthropic"

type wireRequest struct {
	Model         string          `json:"model"`
	MaxTokens     int             `json:"max_tokens"`
	System        string          `json:"system,omitempty"`
	Messages      []wireMessage   `json:"messages"`
	Temperature   *float64        `json:"temperature,omitempty"`
	TopP          *float64        `json:"top_p,omitempty"`
	StopSequences []string        `json:"stop_sequences,omitempty"`
	Metadata      *wireMetadata   `json:"metadata,omitempty"`
	Tools         []wireTool      `json:"tools,omitempty"`
	ToolChoice    *wireToolChoice `json:"tool_choice,omitempty"`
	Stream        bool            `json:"stream,omitempty"`
}

type wireMetadata struct {
	UserID string `json:"user_id,omitempty"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type wireToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

type wireMessage struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Source    *wireSource     `json:"source,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type wireSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

var emptyObject = json.RawMessage("{}")

// Encode returns the Messages API body for req, addressed to model. Tool
// results (RoleTool messages, or tool_result parts anywhere) become
// tool_result blocks in a user turn, consecutive turns of the same role are
// merged, and MaxTokens defaults to DefaultMaxTokens. When req.Dialect is
// Dialect, req.Extra and each part's Extra are sent unchanged (an Extra key
// replaces the canonical encoding of the same key, except model and stream)
// and parts the canonical form does not hold (thinking, document blocks) go
// out verbatim; from another dialect such parts are left out, a temperature
// above 1 is clamped to 1 and top_p is dropped when temperature is set.
func Encode(req *provider.Request, model string, stream bool) ([]byte, error) {
	same := req.Dialect == Dialect
	w := wireRequest{Model: model, MaxTokens: req.MaxTokens, System: req.System,
		Temperature: req.Temperature, TopP: req.TopP, StopSequences: req.Stop, Stream: stream}
	if w.MaxTokens <= 0 {
		w.MaxTokens = DefaultMaxTokens
	}
	if !same {
		// Requests from other dialects: Anthropic's temperature range is
		// 0..1 (OpenAI's and Gemini's is 0..2), and recent models reject
		// temperature and top_p together, which OpenAI clients often send.
		if t := w.Temperature; t != nil && *t > 1 {
			one := 1.0
			w.Temperature = &one
		}
		if w.Temperature != nil && w.TopP != nil {
			w.TopP = nil
		}
	}
	if uid := req.Metadata["user_id"]; uid != "" {
		w.Metadata = &wireMetadata{UserID: uid}
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if tc := req.ToolChoice; tc != nil {
		switch tc.Mode {
		case "auto", "":
			w.ToolChoice = &wireToolChoice{Type: "auto"}
		case "none":
			w.ToolChoice = &wireToolChoice{Type: "none"}
		case "required":
			w.ToolChoice = &wireToolChoice{Type: "any"}
		case "tool":
			w.ToolChoice = &wireToolChoice{Type: "tool", Name: tc.Name}
		default:
			return nil, fmt.Errorf("unknown tool_choice mode %q", tc.Mode)
		}
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		role := m.Role
		if role == provider.RoleTool {
			role = provider.RoleUser
		}
		if role != provider.RoleUser && role != provider.RoleAssistant {
			return nil, fmt.Errorf("message %d: unsupported role %q", i, m.Role)
		}
		blocks := make([]json.RawMessage, 0, len(m.Content))
		for j := range m.Content {
			p := &m.Content[j]
			var b json.RawMessage
			var err error
			switch {
			case wire.KnownPart(p):
				b, err = encodePart(p, same)
			case same:
				b, err = wire.RawPart(p)
			default:
				continue // another dialect's block (thinking, document...)
			}
			if err != nil {
				return nil, fmt.Errorf("message %d part %d: %w", i, j, err)
			}
			blocks = append(blocks, b)
		}
		if len(blocks) == 0 && len(m.Content) > 0 {
			continue // every part was another dialect's
		}
		if n := len(w.Messages); n > 0 && w.Messages[n-1].Role == role {
			w.Messages[n-1].Content = append(w.Messages[n-1].Content, blocks...)
			continue
		}
		w.Messages = append(w.Messages, wireMessage{Role: role, Content: blocks})
	}
	if w.Messages == nil {
		w.Messages = []wireMessage{}
	}
	body, err := json.Marshal(&w)
	if err != nil {
		return nil, err
	}
	if same {
		return wire.MergeExtra(body, req.Extra, "model", "stream")
	}
	return body, nil
}

func encodePart(p *provider.Part, same bool) (json.RawMessage, error) {
	var b wireBlock
	switch p.Type {
	case provider.PartText:
		b = wireBlock{Type: "text", Text: p.Text}
	case provider.PartImage:
		if p.Image == nil {
			return nil, fmt.Errorf("image part without image")
		}
		if p.Image.Data != "" {
			b = wireBlock{Type: "image", Source: &wireSource{Type: "base64", MediaType: p.Image.MediaType, Data: p.Image.Data}}
		} else {
			b = wireBlock{Type: "image", Source: &wireSource{Type: "url", URL: p.Image.URL}}
		}
	case provider.PartToolCall:
		tc := p.ToolCall
		if tc == nil {
			return nil, fmt.Errorf("tool_call part without tool call")
		}
		args := tc.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = emptyObject
		}
		b = wireBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: args}
	case provider.PartToolResult:
		tr := p.ToolResult
		if tr == nil {
			return nil, fmt.Errorf("tool_result part without result")
		}
		content := tr.Content
		b = wireBlock{Type: "tool_result", ToolUseID: tr.CallID, Content: &content, IsError: tr.IsError}
	default:
		return nil, fmt.Errorf("unsupported part type %q", p.Type)
	}
	raw, err := json.Marshal(&b)
	if err != nil {
		return nil, err
	}
	if same && len(p.Extra) > 0 {
		return wire.MergeExtra(raw, p.Extra, "type")
	}
	return raw, nil
}

// Response wire types.

type wireResponse struct {
	ID         string         `json:"id"`
	Type       string         `json:"type"`
	Model      string         `json:"model"`
	Content    []wireRespPart `json:"content"`
	StopReason string         `json:"stop_reason"`
	Usage      wireUsage      `json:"usage"`
}

type wireRespPart struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// thinking and redacted_thinking blocks
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
}

// thinkingPart returns the canonical form of a thinking or redacted_thinking
// block: its fields verbatim in Extra.
func (b *wireRespPart) thinkingPart() provider.Part {
	extra := make(map[string]json.RawMessage, 2)
	str := func(k, v string) {
		raw, _ := json.Marshal(v) // a string always marshals
		extra[k] = raw
	}
	if b.Type == provider.PartRedactedThinking {
		str("data", b.Data)
	} else {
		str("thinking", b.Thinking)
		str("signature", b.Signature)
	}
	return provider.Part{Type: b.Type, Extra: extra}
}

type wireUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// canonical counts every prompt token (cache reads and writes included), as
// OpenAI's prompt_tokens does.
func (u wireUsage) canonical() provider.Usage {
	return provider.Usage{InputTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens: u.OutputTokens}
}
