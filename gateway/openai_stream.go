package gateway

import (
	"strings"

	"github.com/llmguard/llmguard/provider"
)

// ---- OpenAI stream encoding ----

// oaStream writes canonical chunks as chat.completion.chunk events.
// A stream relayed from OpenAI itself (chunks carrying their event,
// Chunk.Raw) is written event by event as OpenAI sent it, less the usage
// chunk when the client did not ask for one.
type oaStream struct {
	w            eventWriter
	buf          []byte
	id, model    string
	created      int64
	includeUsage bool
	started      bool
	toolSeen     map[int]bool
	pending      bool // start was called; the role chunk not written yet
	rawFinish    bool // the upstream's finish chunk went out
	rawUsage     bool // the upstream's usage chunk went out
	rawDone      bool // the upstream's [DONE] went out
	lastRaw      *provider.RawEvent
	text         textTemplate     // a text chunk of this stream
	c            oaChunk          // the chunk being written
	choice       [1]oaChunkChoice // its one choice
	call         [1]oaDeltaCall   // its one tool call fragment
	reason       string           // the finish reason written
	usage        oaUsage          // the usage written
}

// noText is the empty content of a role chunk (never written to).
var noText = ""

// chunkOf is a chunk of this stream with one choice, delta d and finish
// reason finish (nil: null).
func (s *oaStream) chunkOf(d oaDelta, finish *string) *oaChunk {
	s.c = oaChunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.model, Choices: s.choice[:]}
	s.choice[0] = oaChunkChoice{Delta: d, FinishReason: finish}
	return &s.c
}

func (s *oaStream) emit(b []byte) error {
	s.buf = b
	return s.w.Event("", b)
}

// start writes the role chunk (OpenAI streams carry no usage up front).
func (s *oaStream) start(model, id string, _ *provider.Usage) error {
	s.model, s.text = model, textTemplate{}
	if strings.HasPrefix(id, "chatcmpl-") {
		s.id = id
	}
	s.started, s.pending = true, true
	return nil
}

// roleChunk writes the role chunk once, unless the upstream's stream is
// relayed from its start.
func (s *oaStream) roleChunk() error {
	if !s.pending {
		return nil
	}
	s.pending = false
	return s.emit(appendJSON(s.buf[:0], s.chunkOf(oaDelta{Role: "assistant", Content: &noText}, nil)))
}

// relay writes an upstream event as it came, once for the chunks decoded
// from it.
func (s *oaStream) relay(c *provider.Chunk) error {
	s.pending = false
	s.rawFinish = s.rawFinish || c.FinishReason != ""
	if c.Raw == s.lastRaw {
		return nil // another chunk of the event already written
	}
	s.lastRaw = c.Raw
	if string(c.Raw.Data) == "[DONE]" {
		s.rawDone = true
	} else if c.Usage != nil && c.Text == "" && c.ToolCall == nil && c.FinishReason == "" {
		if !s.includeUsage {
			return nil // asked for by the adapter, not by the client
		}
		s.rawUsage = true
	}
	return s.w.Event(c.Raw.Name, c.Raw.Data)
}

// chunk writes the content of c (text and/or a tool-call fragment).
func (s *oaStream) chunk(c *provider.Chunk) error {
	if c.Raw != nil {
		return s.relay(c)
	}
	if err := s.roleChunk(); err != nil {
		return err
	}
	if c.Text != "" {
		if err := s.textChunk(&c.Text); err != nil {
			return err
		}
	}
	if tc := c.ToolCall; tc != nil {
		s.call[0] = oaDeltaCall{Index: tc.Index}
		f := &s.call[0]
		if !s.toolSeen[tc.Index] {
			if s.toolSeen == nil {
				s.toolSeen = make(map[int]bool)
			}
			s.toolSeen[tc.Index] = true
			f.ID, f.Type, f.Function.Name = &tc.ID, "function", &tc.Name
		}
		f.Function.Arguments = tc.Arguments
		if err := s.emit(appendJSON(s.buf[:0], s.chunkOf(oaDelta{ToolCalls: s.call[:]}, nil))); err != nil {
			return err
		}
	}
	return nil
}

// textChunk writes a chunk of text, from the stream's template. (A
// pointer: the address of a string argument would move it to the heap at
// each call.)
func (s *oaStream) textChunk(text *string) error {
	if !s.text.made {
		s.buf = appendJSON(s.buf[:0], s.chunkOf(oaDelta{Content: &templateMark}, nil))
		s.text.set(s.buf) // a copy
	}
	if s.text.ok {
		return s.emit(s.text.append(s.buf[:0], *text))
	}
	return s.emit(appendJSON(s.buf[:0], s.chunkOf(oaDelta{Content: text}, nil)))
}

// finish writes the finish chunk, the usage chunk when asked for, and [DONE].
func (s *oaStream) finish(reason string, u provider.Usage) error {
	if s.rawDone {
		return nil
	}
	if err := s.roleChunk(); err != nil {
		return err
	}
	if !s.rawFinish {
		s.reason = oaFinish(reason)
		if err := s.emit(appendJSON(s.buf[:0], s.chunkOf(oaDelta{}, &s.reason))); err != nil {
			return err
		}
	}
	if s.includeUsage && !s.rawUsage {
		s.usage = oaUsageOf(u)
		s.c = oaChunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.model,
			Choices: s.choice[:0], Usage: &s.usage}
		if u.ServiceTier != "" {
			s.c.ServiceTier = oaServiceTier(u.ServiceTier)
		}
		if err := s.emit(appendJSON(s.buf[:0], &s.c)); err != nil {
			return err
		}
	}
	return s.w.Event("", []byte("[DONE]"))
}

// fail writes an error chunk (the SDKs throw on a chunk carrying "error").
func (s *oaStream) fail(e *apiError) error {
	if err := s.roleChunk(); err != nil {
		return err
	}
	b := appendOpenAIError(s.buf[:0], e)
	return s.emit(b)
}
