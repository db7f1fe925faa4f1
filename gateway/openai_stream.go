package gateway

import (
	"strings"

	"github.com/segmentio/encoding/json"

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
}

func (s *oaStream) head() []byte {
	b := append(s.buf[:0], `{"id":`...)
	b = json.AppendEscape(b, s.id, 0)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = appendInt(b, int(s.created))
	b = append(b, `,"model":`...)
	b = json.AppendEscape(b, s.model, 0)
	return b
}

func (s *oaStream) emit(b []byte) error {
	s.buf = b
	return s.w.Event("", b)
}

// start writes the role chunk (OpenAI streams carry no usage up front).
func (s *oaStream) start(model, id string, _ *provider.Usage) error {
	s.model = model
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
	b := s.head()
	b = append(b, `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`...)
	return s.emit(b)
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
	s.buf = append(s.buf[:0], c.Raw.Data...)
	return s.w.Event(c.Raw.Name, s.buf)
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
		b := s.head()
		b = append(b, `,"choices":[{"index":0,"delta":{"content":`...)
		b = json.AppendEscape(b, c.Text, 0)
		b = append(b, `},"logprobs":null,"finish_reason":null}]}`...)
		if err := s.emit(b); err != nil {
			return err
		}
	}
	if tc := c.ToolCall; tc != nil {
		b := s.head()
		b = append(b, `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":`...)
		b = appendInt(b, tc.Index)
		if !s.toolSeen[tc.Index] {
			if s.toolSeen == nil {
				s.toolSeen = make(map[int]bool)
			}
			s.toolSeen[tc.Index] = true
			b = append(b, `,"id":`...)
			b = json.AppendEscape(b, tc.ID, 0)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = json.AppendEscape(b, tc.Name, 0)
			b = append(b, `,"arguments":`...)
		} else {
			b = append(b, `,"function":{"arguments":`...)
		}
		b = json.AppendEscape(b, tc.Arguments, 0)
		b = append(b, `}}]},"logprobs":null,"finish_reason":null}]}`...)
		if err := s.emit(b); err != nil {
			return err
		}
	}
	return nil
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
		b := s.head()
		b = append(b, `,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":`...)
		b = json.AppendEscape(b, oaFinish(reason), 0)
		b = append(b, `}]}`...)
		if err := s.emit(b); err != nil {
			return err
		}
	}
	if s.includeUsage && !s.rawUsage {
		v := oaChunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.model,
			Choices: []oaChunkChoice{}, Usage: new(oaUsageOf(u))}
		if u.ServiceTier != "" {
			v.ServiceTier = oaServiceTier(u.ServiceTier)
		}
		if err := s.emit(appendJSON(s.buf[:0], &v)); err != nil {
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
