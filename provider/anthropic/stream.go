package anthropic

import (
	"bytes"
	"net/http"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/internal/sse"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// decoder turns Messages API stream events into canonical chunks.
type decoder struct {
	call  httpcall.Call
	h     http.Header
	tools map[int]int // content block index -> tool call index
	// thinking maps a content block index to its thinking block index
	// (nil until the first thinking block).
	thinking map[int]int
	start    provider.Usage // usage from message_start
	// relay: the request was the client's own body, so every event also
	// goes back verbatim (Chunk.Raw) for a client of this dialect.
	relay bool
	// log rebuilds the Message of a relayed request (nil otherwise).
	log *messageLog
	sc  eventScan
	// raws keeps the events of a relayed stream.
	raws httpcall.Raws
	// out holds the chunks of the last event: what Decode returns is valid
	// until the next call (httpcall.Stream copies it).
	out []provider.Chunk
}

// one is the chunk c as the event's chunks, in d.out.
func (d *decoder) one(c provider.Chunk) []provider.Chunk {
	d.out = append(d.out[:0], c)
	return d.out
}

// BorrowsEvents implements httpcall.Borrower: a stream that is not relayed
// keeps nothing of its events (an error event's data is copied).
func (d *decoder) BorrowsEvents() bool { return !d.relay && d.log == nil }

// Decode implements httpcall.Decoder: decode, plus each event verbatim on the
// chunks decoded from it (or a chunk of its own) when relaying.
func (d *decoder) Decode(ev sse.Event) ([]provider.Chunk, bool, error) {
	chunks, done, err := d.decode(ev)
	if d.relay && err == nil {
		chunks = d.raws.On(chunks, ev.Name, ev.Data)
	}
	return chunks, done, err
}

type wireEvent struct {
	Type    string        `json:"type"`
	Message *wireResponse `json:"message"`
	Index   int           `json:"index"`
	Block   *wireRespPart `json:"content_block"`
	Delta   *wireDelta    `json:"delta"`
	Usage   *wireUsage    `json:"usage"`
}

// DecodeWhole implements httpcall.WholeDecoder: a non-streaming answer to a
// streaming request (relayed as it is when the request is).
func (d *decoder) DecodeWhole(body []byte) (*provider.Response, error) {
	return httpcall.RelayWhole(Decode, body, d.relay)
}

// RawAnswer implements provider.RawAnswerer: the Message rebuilt from the
// events of a relayed request.
func (d *decoder) RawAnswer() json.RawMessage { return d.log.RawAnswer() }

// decode turns one event into canonical chunks.
func (d *decoder) decode(ev sse.Event) ([]provider.Chunk, bool, error) {
	if ev.Name == "error" {
		return nil, false, d.call.StreamEvent(d.h, ev.Name, bytes.Clone(ev.Data))
	}
	if d.log != nil {
		d.log.add(ev.Data)
	}
	e, ok := d.sc.scan(ev.Data)
	if !ok {
		e = new(wireEvent)
		if err := rawjson.Unmarshal(ev.Data, e); err != nil {
			return nil, false, err
		}
	}
	switch e.Type {
	case "message_start":
		if e.Message == nil {
			return nil, false, nil
		}
		d.start = e.Message.Usage.canonical()
		u := d.start
		return []provider.Chunk{{ID: e.Message.ID, Model: e.Message.Model, Usage: &u}}, false, nil
	case "content_block_start":
		return d.blockStart(e), false, nil
	case "content_block_delta":
		return d.blockDelta(e), false, nil
	case "message_delta":
		return d.messageDelta(e), false, nil
	case "message_stop":
		return nil, true, nil
	case "error":
		return nil, false, d.call.StreamEvent(d.h, "error", bytes.Clone(ev.Data))
	}
	// ping, content_block_stop and future events.
	return nil, false, nil
}

// blockStart reads content_block_start: a tool call or thinking block
// begins (their deltas are numbered from here), or text comes with it.
func (d *decoder) blockStart(e *wireEvent) []provider.Chunk {
	switch b := e.Block; {
	case b == nil:
	case b.Type == "tool_use":
		i := len(d.tools)
		d.tools[e.Index] = i
		return []provider.Chunk{{ToolCall: &provider.ToolCallDelta{Index: i, ID: b.ID, Name: b.Name}}}
	case b.Type == provider.PartThinking || b.Type == provider.PartRedactedThinking:
		if d.thinking == nil {
			d.thinking = make(map[int]int)
		}
		i := len(d.thinking)
		d.thinking[e.Index] = i
		return []provider.Chunk{{Thinking: &provider.ThinkingDelta{Index: i, Type: b.Type,
			Thinking: b.Thinking, Signature: b.Signature, Data: b.Data}}}
	case b.Type == "text" && b.Text != "":
		return []provider.Chunk{{Text: b.Text}}
	}
	return nil
}

// blockDelta reads content_block_delta: text, thinking or a tool call's
// arguments.
func (d *decoder) blockDelta(e *wireEvent) []provider.Chunk {
	if e.Delta == nil {
		return nil
	}
	switch e.Delta.Type {
	case "text_delta":
		return d.one(provider.Chunk{Text: e.Delta.Text})
	case "thinking_delta", "signature_delta":
		if i, ok := d.thinking[e.Index]; ok && e.Delta.Thinking+e.Delta.Signature != "" {
			return d.one(provider.Chunk{Thinking: &provider.ThinkingDelta{Index: i,
				Thinking: e.Delta.Thinking, Signature: e.Delta.Signature}})
		}
	case "input_json_delta":
		if i, ok := d.tools[e.Index]; ok && e.Delta.PartialJSON != "" {
			return d.one(provider.Chunk{ToolCall: &provider.ToolCallDelta{Index: i, Arguments: e.Delta.PartialJSON}})
		}
	}
	return nil
}

// messageDelta reads message_delta: the stop reason and the usage.
func (d *decoder) messageDelta(e *wireEvent) []provider.Chunk {
	var ch provider.Chunk
	if e.Delta != nil {
		ch.FinishReason = finish(e.Delta.StopReason)
		ch.StopSequence = e.Delta.StopSequence
	}
	if e.Usage != nil {
		// The delta's counts are cumulative; those it leaves out are
		// message_start's.
		u := d.start
		u.Merge(e.Usage.canonical())
		if e.Usage.InputTokens == 0 && e.Usage.CacheCreationInputTokens+e.Usage.CacheReadInputTokens > 0 {
			u.InputTokens = d.start.InputTokens - d.start.CacheReadTokens - d.start.CacheWriteTokens +
				e.Usage.CacheCreationInputTokens + e.Usage.CacheReadInputTokens
		}
		ch.Usage = &u
	}
	return []provider.Chunk{ch}
}
