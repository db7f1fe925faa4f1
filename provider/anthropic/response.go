package anthropic

import (
	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/provider"
)

// Response wire types.

type wireResponse struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Model        string         `json:"model"`
	Content      []wireRespPart `json:"content"`
	StopReason   string         `json:"stop_reason"`
	StopSequence string         `json:"stop_sequence"`
	Usage        wireUsage      `json:"usage"`
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
	InputTokens              int    `json:"input_tokens"`
	OutputTokens             int    `json:"output_tokens"`
	CacheCreationInputTokens int    `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int    `json:"cache_read_input_tokens"`
	ServiceTier              string `json:"service_tier"`
}

// canonical counts every prompt token (cache reads and writes included), as
// OpenAI's prompt_tokens does, and keeps the cache counts apart too.
func (u wireUsage) canonical() provider.Usage {
	return provider.Usage{InputTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens, ServiceTier: u.ServiceTier}
}
