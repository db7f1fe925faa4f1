package gateway

import (
	"bytes"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// ---- Anthropic stream encoding ----

// anStream writes canonical chunks as the Anthropic event sequence.
// A stream relayed from an Anthropic target (chunks carrying their event,
// Chunk.Raw) is written event by event as the upstream sent it, with only
// the bookkeeping done here, so a stream that breaks and continues on
// another target goes on with the next block number.
type anStream struct {
	w         eventWriter
	buf       []byte
	id, model string
	next      int            // index of the next content block
	open      int            // index of the open block, -1 when none
	openText  bool           // the open block is a text block
	tools     map[int]int    // tool-call index -> block index
	thinking  map[int]int    // thinking-block index -> block index
	startU    provider.Usage // usage known at start
	stopSeq   string         // the stop sequence, once said
	started   bool
	pending   bool // start was called; message_start not written yet
	rawDelta  bool // the upstream's message_delta went out
	rawStop   bool // the upstream's message_stop went out
	lastRaw   *provider.RawEvent
	lastType  string       // the type of the last event relayed
	d         anBlockDelta // the content_block_delta being written
	// text is the template of the last content_block_delta written: its
	// block and its kind.
	text      textTemplate
	textIndex int
	textKind  string
}

func (s *anStream) emit(name string, b []byte) error {
	s.buf = b
	return s.w.Event(name, b)
}

// start records the stream's head, written with the first chunk (which may
// carry the upstream's own message_start) or at the end: message_start,
// with the upstream's message id and usage when it sent them, and a ping.
func (s *anStream) start(model, id string, u *provider.Usage) error {
	s.model, s.open, s.started, s.pending = model, -1, true, true
	if strings.HasPrefix(id, "msg_") {
		s.id = id
	}
	if u != nil {
		s.startU = *u
	}
	return nil
}

// head writes message_start and a ping once, unless the upstream's went
// out.
func (s *anStream) head() error {
	if !s.pending {
		return nil
	}
	s.pending = false
	v := anMessageStart{Type: "message_start", Message: anAnswer{ID: s.id, Type: "message", Role: "assistant",
		Model: s.model, Content: []any{}, Usage: anUsageOf(s.startU, true)}}
	if err := s.emit("message_start", appendJSON(s.buf[:0], &v)); err != nil {
		return err
	}
	return s.emit("ping", append(s.buf[:0], `{"type":"ping"}`...))
}

func (s *anStream) closeBlock() error {
	if s.open < 0 {
		return nil
	}
	v := anBlockStop{Type: "content_block_stop", Index: s.open}
	s.open = -1
	return s.emit("content_block_stop", appendJSON(s.buf[:0], &v))
}

// delta writes a content_block_delta of block index: its delta has type
// kind and text in its field named for the kind.
func (s *anStream) delta(index int, kind, text string) error {
	if !s.text.made || s.textIndex != index || s.textKind != kind {
		s.text, s.textIndex, s.textKind = textTemplate{}, index, kind
		s.text.set(s.encodeDelta(index, kind, templateMark))
	}
	if s.text.ok {
		return s.emit("content_block_delta", s.text.append(s.buf[:0], text))
	}
	return s.emit("content_block_delta", s.encodeDelta(index, kind, text))
}

// encodeDelta encodes a content_block_delta of block index: its delta has
// type kind and text in its field named for the kind.
func (s *anStream) encodeDelta(index int, kind, text string) []byte {
	s.d = anBlockDelta{Type: "content_block_delta", Index: index, Delta: anDelta{Type: kind}}
	switch d := &s.d.Delta; kind {
	case "text_delta":
		d.Text = &text
	case "thinking_delta":
		d.Thinking = &text
	case "signature_delta":
		d.Signature = &text
	case "input_json_delta":
		d.PartialJSON = &text
	}
	return appendJSON(s.buf[:0], &s.d)
}

// startBlock closes the open block and starts block s.next with its
// content_block (a wire type), a text block when text is set.
func (s *anStream) startBlock(block any, text bool) (int, error) {
	if err := s.closeBlock(); err != nil {
		return 0, err
	}
	idx := s.next
	s.next++
	s.open, s.openText = idx, text
	v := anBlockStart{Type: "content_block_start", Index: idx, ContentBlock: block}
	return idx, s.emit("content_block_start", appendJSON(s.buf[:0], &v))
}

// thinkingChunk writes a thinking fragment: a new thinking or
// redacted_thinking block on its first fragment, then thinking_delta and
// signature_delta events.
func (s *anStream) thinkingChunk(th *provider.ThinkingDelta) error {
	idx, ok := s.thinking[th.Index]
	if !ok {
		if s.thinking == nil {
			s.thinking = make(map[int]int)
		}
		var block any = anThinking{Type: "thinking"}
		if th.Type == provider.PartRedactedThinking {
			block = anRedacted{Type: "redacted_thinking", Data: th.Data}
		}
		var err error
		if idx, err = s.startBlock(block, false); err != nil {
			return err
		}
		s.thinking[th.Index] = idx
	}
	if th.Thinking != "" {
		if err := s.delta(idx, "thinking_delta", th.Thinking); err != nil {
			return err
		}
	}
	if th.Signature != "" {
		return s.delta(idx, "signature_delta", th.Signature)
	}
	return nil
}

// deltaHead is how the Messages API starts a content_block_delta event.
var deltaHead = []byte(`{"type":"content_block_delta",`)

// isDelta reports whether ev is a content_block_delta as the Messages API
// sends it: named so, with its type as its first field. (A second type
// field, which JSON allows and no API sends, is not looked for.)
func isDelta(ev *provider.RawEvent) bool {
	return ev.Name == "content_block_delta" && bytes.HasPrefix(ev.Data, deltaHead)
}

// relay writes an upstream event as it came and follows the block
// numbering and the end of the message.
func (s *anStream) relay(ev *provider.RawEvent) error {
	if isDelta(ev) {
		// Most of a stream, and nothing to follow: not read again.
		if err := s.head(); err != nil {
			return err
		}
		return s.w.Event(ev.Name, ev.Data)
	}
	var typ string
	index := -1
	_ = rawjson.EachField(ev.Data, func(k, v []byte) error {
		switch string(k) {
		case "type":
			typ, _ = rawjson.Text(v, s.lastType) // mostly the same: no allocation
			s.lastType = typ
		case "index":
			index, _ = rawjson.Int(v)
		}
		return nil
	})
	switch typ {
	case "message_start":
		s.pending = false
	case "content_block_start":
		s.open, s.openText = index, false
		s.next = max(s.next, index+1)
	case "content_block_stop":
		s.open = -1
	case "message_delta":
		s.rawDelta = true
	case "message_stop":
		s.rawStop = true
	}
	if err := s.head(); err != nil {
		return err
	}
	return s.w.Event(ev.Name, ev.Data)
}

// chunk writes the content of c.
func (s *anStream) chunk(c *provider.Chunk) error {
	if c.StopSequence != "" {
		s.stopSeq = c.StopSequence
	}
	if c.Raw != nil {
		if c.Raw == s.lastRaw {
			return nil // another chunk of the event already written
		}
		s.lastRaw = c.Raw
		return s.relay(c.Raw)
	}
	if err := s.head(); err != nil {
		return err
	}
	if c.Thinking != nil {
		if err := s.thinkingChunk(c.Thinking); err != nil {
			return err
		}
	}
	if c.Text != "" {
		if s.open < 0 || !s.openText {
			if _, err := s.startBlock(anText{Type: "text"}, true); err != nil {
				return err
			}
		}
		if err := s.delta(s.open, "text_delta", c.Text); err != nil {
			return err
		}
	}
	if tc := c.ToolCall; tc != nil {
		idx, ok := s.tools[tc.Index]
		if !ok {
			if s.tools == nil {
				s.tools = make(map[int]int)
			}
			var err error
			if idx, err = s.startBlock(anToolUse{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: json.RawMessage("{}")}, false); err != nil {
				return err
			}
			s.tools[tc.Index] = idx
		}
		if tc.Arguments != "" {
			if err := s.delta(idx, "input_json_delta", tc.Arguments); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish closes the open block and writes message_delta and message_stop.
func (s *anStream) finish(reason string, u provider.Usage) error {
	if s.rawStop {
		return nil
	}
	if err := s.head(); err != nil {
		return err
	}
	if err := s.closeBlock(); err != nil {
		return err
	}
	if s.rawDelta {
		return s.emit("message_stop", append(s.buf[:0], `{"type":"message_stop"}`...))
	}
	final := s.startU
	final.Merge(u)
	v := anMessageDelta{Type: "message_delta", Usage: anUsageOf(final, false)}
	v.Delta.StopReason, v.Delta.StopSequence = anStopReason(reason), stopSequence(s.stopSeq)
	if err := s.emit("message_delta", appendJSON(s.buf[:0], &v)); err != nil {
		return err
	}
	return s.emit("message_stop", append(s.buf[:0], `{"type":"message_stop"}`...))
}

// fail writes an error event (the SDKs throw on it).
func (s *anStream) fail(e *apiError) error {
	if err := s.head(); err != nil {
		return err
	}
	return s.emit("error", appendAnthropicError(s.buf[:0], e))
}
