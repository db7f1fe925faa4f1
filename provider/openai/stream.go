package openai

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/internal/sse"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

type wireResponse struct {
	ID          string          `json:"id"`
	Model       string          `json:"model"`
	Choices     []wireChoice    `json:"choices"`
	Usage       *wireUsage      `json:"usage"`
	ServiceTier string          `json:"service_tier"`
	Error       json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        int         `json:"index"`
	Message      wireRespMsg `json:"message"`
	Delta        wireRespMsg `json:"delta"`
	FinishReason string      `json:"finish_reason"`
}

type wireRespMsg struct {
	Content   flexText       `json:"content"`
	Refusal   string         `json:"refusal"`
	ToolCalls []wireToolCall `json:"tool_calls"`
}

// flexText is message content as a string, null, or (Mistral's reasoning
// models and some compatible servers) an array of parts, of which the
// "text" parts are joined; other parts (thinking...) are skipped.
type flexText string

// UnmarshalJSON implements json.Unmarshaler.
func (f *flexText) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		s, err := rawjson.String(b)
		*f = flexText(s)
		return err
	}
	if len(b) > 0 && b[0] == '[' {
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := rawjson.Unmarshal(b, &parts); err != nil {
			return err
		}
		var s string
		for _, p := range parts {
			if p.Type == "text" || p.Type == "" {
				s += p.Text
			}
		}
		*f = flexText(s)
		return nil
	}
	if string(b) == "null" {
		return nil
	}
	return fmt.Errorf("content: unexpected %.20s", b)
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	PromptDetails    struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// usage is the canonical usage of a response or chunk with usage u.
func (r *wireResponse) usage() *provider.Usage {
	u := r.Usage
	return &provider.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens,
		CacheReadTokens: u.PromptDetails.CachedTokens, ReasoningTokens: u.CompletionDetails.ReasoningTokens,
		ServiceTier: r.ServiceTier}
}

var done = []byte("[DONE]")

// decoder turns chat.completion.chunk events into canonical chunks.
type decoder struct {
	call    httpcall.Call
	h       http.Header
	started bool
	// relay: the request was the client's own body and the answer is
	// OpenAI's, so every event also goes back verbatim (Chunk.Raw).
	relay bool
	// log rebuilds the chat.completion of a relayed request (nil otherwise).
	log *completionLog
	sc  chunkScan
	// raws keeps the events of a relayed stream.
	raws httpcall.Raws
	// out holds the chunks of the last event: what Decode returns is valid
	// until the next call (httpcall.Stream copies it).
	out []provider.Chunk
}

// DecodeWhole implements httpcall.WholeDecoder: a non-streaming answer to a
// streaming request (relayed as it is when the request is).
func (d *decoder) DecodeWhole(body []byte) (*provider.Response, error) {
	return httpcall.RelayWhole(Decode, body, d.relay)
}

// RawAnswer implements provider.RawAnswerer: the chat.completion rebuilt
// from the chunks of a relayed request.
func (d *decoder) RawAnswer() json.RawMessage { return d.log.RawAnswer() }

// BorrowsEvents implements httpcall.Borrower: a stream that is not relayed
// keeps nothing of its events (an error event's data is copied).
func (d *decoder) BorrowsEvents() bool { return !d.relay && d.log == nil }

// Decode implements httpcall.Decoder: decode, plus each event verbatim on the
// chunks decoded from it (or a chunk of its own) when relaying.
func (d *decoder) Decode(ev sse.Event) ([]provider.Chunk, bool, error) {
	chunks, done, err := d.decode(ev)
	if d.relay && err == nil {
		chunks = d.raws.On(chunks, ev.Name, bytes.TrimSpace(ev.Data))
	}
	return chunks, done, err
}

// decode turns one event into canonical chunks.
func (d *decoder) decode(ev sse.Event) ([]provider.Chunk, bool, error) {
	data := bytes.TrimSpace(ev.Data)
	if bytes.Equal(data, done) {
		return nil, true, nil
	}
	if d.log != nil && ev.Name != "error" {
		d.log.add(data)
	}
	if ev.Name == "error" {
		return nil, false, d.call.StreamEvent(d.h, ev.Name, bytes.Clone(ev.Data))
	}
	r, ok := d.sc.scan(data)
	if !ok {
		r = new(wireResponse)
		if err := rawjson.Unmarshal(data, r); err != nil {
			return nil, false, err
		}
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		return nil, false, d.call.StreamEvent(d.h, ev.Name, bytes.Clone(ev.Data))
	}
	out := d.out[:0]
	defer func() { d.out = out }()
	if !d.started && (r.ID != "" || r.Model != "") {
		d.started = true
		out = append(out, provider.Chunk{ID: r.ID, Model: r.Model})
	}
	for _, c := range r.Choices {
		if c.Index != 0 {
			continue // n > 1 is not part of the canonical form
		}
		if c.FinishReason == "error" {
			return out, false, d.call.StreamEvent(d.h, ev.Name, bytes.Clone(ev.Data))
		}
		if c.Delta.Content != "" {
			out = append(out, provider.Chunk{Text: string(c.Delta.Content)})
		}
		for _, tc := range c.Delta.ToolCalls {
			i := 0
			if tc.Index != nil {
				i = *tc.Index
			}
			out = append(out, provider.Chunk{ToolCall: &provider.ToolCallDelta{Index: i, ID: tc.ID,
				Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
		}
		if c.FinishReason != "" {
			out = append(out, provider.Chunk{FinishReason: finish(c.FinishReason)})
		}
	}
	if r.Usage != nil {
		out = append(out, provider.Chunk{Usage: r.usage()})
	}
	return out, false, nil
}
