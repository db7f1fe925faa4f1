package gateway

import (
	"bytes"
	"slices"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// This file holds the wire types of a whole answer in each chat dialect
// (an OpenAI chat.completion, an Anthropic message) and of their usage
// objects, which the streams' last events carry too. The JSON library
// encodes them (appendJSON); their field order is the providers'.

// oaCompletion is an OpenAI chat.completion object.
type oaCompletion struct {
	ID          string     `json:"id"`
	Object      string     `json:"object"`
	Created     int64      `json:"created"`
	Model       string     `json:"model"`
	Choices     []oaChoice `json:"choices"`
	Usage       oaUsage    `json:"usage"`
	ServiceTier string     `json:"service_tier,omitempty"`
}

type oaChoice struct {
	Index        int         `json:"index"`
	Message      oaAnswerMsg `json:"message"`
	Logprobs     *struct{}   `json:"logprobs"` // always null
	FinishReason string      `json:"finish_reason"`
}

type oaAnswerMsg struct {
	Role      string       `json:"role"`
	Content   *string      `json:"content"` // null for tool calls alone
	ToolCalls []oaToolCall `json:"tool_calls,omitempty"`
	Refusal   *string      `json:"refusal"` // always null
}

// oaUsage is OpenAI's usage object.
type oaUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	PromptDetails    struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func oaUsageOf(u provider.Usage) oaUsage {
	v := oaUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
	v.PromptDetails.CachedTokens = u.CacheReadTokens
	v.CompletionDetails.ReasoningTokens = u.ReasoningTokens
	return v
}

// appendOpenAIResponse appends res as an OpenAI chat.completion object.
func appendOpenAIResponse(b []byte, res *provider.Response, id string, created int64) []byte {
	v := oaCompletion{ID: id, Object: "chat.completion", Created: created, Model: res.Model,
		Choices: []oaChoice{{FinishReason: oaFinish(res.FinishReason)}}, Usage: oaUsageOf(res.Usage)}
	if res.Usage.ServiceTier != "" {
		v.ServiceTier = oaServiceTier(res.Usage.ServiceTier)
	}
	m := &v.Choices[0].Message
	m.Role = "assistant"
	if res.Text != "" || len(res.ToolCalls) == 0 {
		m.Content = &res.Text
	}
	for _, tc := range res.ToolCalls {
		c := oaToolCall{ID: tc.ID, Type: "function"}
		c.Function.Name = tc.Name
		c.Function.Arguments = "{}"
		if args := bytes.TrimSpace(tc.Arguments); len(args) > 0 {
			c.Function.Arguments = string(args)
		}
		m.ToolCalls = append(m.ToolCalls, c)
	}
	return appendJSON(b, &v)
}

// anAnswer is an Anthropic message object.
type anAnswer struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"` // "message"
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	Content      []any   `json:"content"`     // anText, anToolUse, or a raw block
	StopReason   *string `json:"stop_reason"` // null in message_start
	StopSequence *string `json:"stop_sequence"`
	Usage        anUsage `json:"usage"`
}

// anMessageStart is a stream's message_start event.
type anMessageStart struct {
	Type    string   `json:"type"` // "message_start"
	Message anAnswer `json:"message"`
}

// anMessageDelta is a stream's message_delta event.
type anMessageDelta struct {
	Type  string `json:"type"` // "message_delta"
	Delta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage anUsage `json:"usage"`
}

type anText struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

type anToolUse struct {
	Type  string          `json:"type"` // "tool_use"
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// anUsage is Anthropic's usage object: input_tokens counts the prompt
// tokens outside the cache, the cache reads and writes have their own
// fields.
type anUsage struct {
	InputTokens   int    `json:"input_tokens"`
	CacheCreation int    `json:"cache_creation_input_tokens"`
	CacheRead     int    `json:"cache_read_input_tokens"`
	OutputTokens  int    `json:"output_tokens"`
	ServiceTier   string `json:"service_tier,omitempty"`
}

// anUsageOf is u as Anthropic's usage object, with its service tier when
// tier is set and the tier known.
func anUsageOf(u provider.Usage, tier bool) anUsage {
	v := anUsage{InputTokens: max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0),
		CacheCreation: u.CacheWriteTokens, CacheRead: u.CacheReadTokens, OutputTokens: u.OutputTokens}
	if tier && u.ServiceTier != "" {
		v.ServiceTier = anServiceTier(u.ServiceTier)
	}
	return v
}

// appendAnthropicResponse appends res as an Anthropic message object.
func appendAnthropicResponse(b []byte, res *provider.Response, id string) []byte {
	v := anAnswer{ID: id, Type: "message", Role: "assistant", Model: res.Model,
		Content: make([]any, 0, len(res.Thinking)+1+len(res.ToolCalls)), StopReason: stopSequence(anStopReason(res.FinishReason)),
		StopSequence: stopSequence(res.StopSequence), Usage: anUsageOf(res.Usage, true)}
	for i := range res.Thinking {
		v.Content = append(v.Content, json.RawMessage(appendRawBlock(nil, &res.Thinking[i])))
	}
	if res.Text != "" {
		v.Content = append(v.Content, anText{Type: "text", Text: res.Text})
	}
	for _, tc := range res.ToolCalls {
		v.Content = append(v.Content, anToolUse{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: objectOr(tc.Arguments)})
	}
	return appendJSON(b, &v)
}

// stopSequence is s, or nil (null) when empty (a stop sequence, or reason).
func stopSequence(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// objectOr is raw when it is a JSON object, else {}.
func objectOr(raw json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' && rawjson.Valid(t) {
		return t
	}
	return json.RawMessage("{}")
}

// appendRawBlock appends a block the canonical form keeps verbatim (a
// thinking or redacted_thinking block): its type, then its Extra fields in
// key order. Extra values are JSON already (the adapter or the request
// decoder produced them).
func appendRawBlock(b []byte, p *provider.Part) []byte {
	b = append(b, `{"type":`...)
	b = json.AppendEscape(b, p.Type, 0)
	keys := make([]string, 0, len(p.Extra))
	for k := range p.Extra {
		if k != "type" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = append(b, ',')
		b = json.AppendEscape(b, k, 0)
		b = append(b, ':')
		b = append(b, p.Extra[k]...)
	}
	return append(b, '}')
}

// oaChunk is a chat.completion.chunk object.
type oaChunk struct {
	ID          string          `json:"id"`
	Object      string          `json:"object"` // "chat.completion.chunk"
	Created     int64           `json:"created"`
	Model       string          `json:"model"`
	Choices     []oaChunkChoice `json:"choices"`
	Usage       *oaUsage        `json:"usage,omitempty"`
	ServiceTier string          `json:"service_tier,omitempty"`
}

type oaChunkChoice struct {
	Index        int       `json:"index"`
	Delta        oaDelta   `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"` // always null
	FinishReason *string   `json:"finish_reason"`
}

type oaDelta struct {
	Role      string        `json:"role,omitempty"`
	Content   *string       `json:"content,omitempty"`
	ToolCalls []oaDeltaCall `json:"tool_calls,omitempty"`
}

// oaDeltaCall is a tool call's fragment: its id, type and name come with
// the first.
type oaDeltaCall struct {
	Index    int     `json:"index"`
	ID       *string `json:"id,omitempty"`
	Type     string  `json:"type,omitempty"`
	Function struct {
		Name      *string `json:"name,omitempty"`
		Arguments string  `json:"arguments"`
	} `json:"function"`
}

// anBlockStart is a stream's content_block_start event.
type anBlockStart struct {
	Type         string `json:"type"` // "content_block_start"
	Index        int    `json:"index"`
	ContentBlock any    `json:"content_block"` // anText, anToolUse, anThinking, anRedacted
}

// anBlockStop is a stream's content_block_stop event.
type anBlockStop struct {
	Type  string `json:"type"` // "content_block_stop"
	Index int    `json:"index"`
}

// anBlockDelta is a stream's content_block_delta event.
type anBlockDelta struct {
	Type  string  `json:"type"` // "content_block_delta"
	Index int     `json:"index"`
	Delta anDelta `json:"delta"`
}

// anDelta is a block's fragment: of its fields, the one its type names.
type anDelta struct {
	Type        string  `json:"type"`
	Text        *string `json:"text,omitempty"`
	Thinking    *string `json:"thinking,omitempty"`
	Signature   *string `json:"signature,omitempty"`
	PartialJSON *string `json:"partial_json,omitempty"`
}

type anThinking struct {
	Type      string `json:"type"` // "thinking"
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type anRedacted struct {
	Type string `json:"type"` // "redacted_thinking"
	Data string `json:"data"`
}
