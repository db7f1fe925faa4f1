package gateway

import (
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// rsStream writes a Responses API event stream. Translated chunks become
// the typed events OpenAI sends (response.created, output_item.added,
// content_part.added, output_text.delta, function_call_arguments.delta, the
// .done events, response.completed), each with its sequence_number. A chunk
// carrying its upstream event (Chunk.Raw: a relayed stream) is written
// verbatim, and then the stream is the upstream's alone.
type rsStream struct {
	w       eventWriter
	buf     []byte
	a       *rsAnswer
	seq     int
	begun   bool
	msg     *rsItem
	tools   map[int]*rsItem
	raw     bool
	lastRaw []byte // the last relayed event's data (its sequence_number)
	keeper  *rsKeeper
}

func newRsStream(w eventWriter, buf []byte, in *inbound, created int64, k *rsKeeper) *rsStream {
	a := &rsAnswer{id: newItemID("resp_"), created: created, echo: echoOf(in), kept: k != nil}
	return &rsStream{w: w, buf: buf, a: a, keeper: k}
}

// event writes one typed event: {"type":T,"sequence_number":N,...fields}.
func (s *rsStream) event(typ string, fields func(b []byte) []byte) error {
	b := append(s.buf[:0], `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","sequence_number":`...)
	b = appendInt(b, s.seq)
	s.seq++
	b = fields(b)
	b = append(b, '}')
	s.buf = b
	return s.w.Event(typ, b)
}

func (s *rsStream) start(model, id string, _ *provider.Usage) error {
	s.a.model = model // the events go out with the first chunk that is not relayed
	if strings.HasPrefix(id, "resp_") {
		s.a.id = id
	}
	return nil
}

// begin writes response.created and response.in_progress, once.
func (s *rsStream) begin() error {
	if s.begun {
		return nil
	}
	s.begun = true
	obj := func(b []byte) []byte { return s.a.appendObject(append(b, `,"response":`...), false) }
	if err := s.event("response.created", obj); err != nil {
		return err
	}
	return s.event("response.in_progress", obj)
}

func (s *rsStream) itemRef(b []byte, it *rsItem) []byte {
	b = append(b, `,"item_id":`...)
	b = json.AppendEscape(b, it.id, 0)
	b = append(b, `,"output_index":`...)
	return appendInt(b, s.index(it))
}

func (s *rsStream) index(it *rsItem) int {
	for i, x := range s.a.items {
		if x == it {
			return i
		}
	}
	return -1
}

// add appends an output item and writes output_item.added (and a message's
// content_part.added).
func (s *rsStream) add(it *rsItem) error {
	s.a.items = append(s.a.items, it)
	err := s.event("response.output_item.added", func(b []byte) []byte {
		b = append(b, `,"output_index":`...)
		b = appendInt(b, len(s.a.items)-1)
		b = append(b, `,"item":`...)
		return appendItem(b, it, false)
	})
	if err != nil || it.call {
		return err
	}
	return s.event("response.content_part.added", func(b []byte) []byte {
		return appendTextPart(append(s.itemRef(b, it), `,"content_index":0,"part":`...), "")
	})
}

func (s *rsStream) chunk(c *provider.Chunk) error {
	if c.Raw != nil {
		s.raw = true
		s.lastRaw = c.Raw.Data
		return s.w.Event(c.Raw.Name, c.Raw.Data)
	}
	if s.raw {
		return nil // nothing of ours may follow the upstream's own events
	}
	if c.Text == "" && c.ToolCall == nil {
		return nil
	}
	if err := s.begin(); err != nil {
		return err
	}
	if c.Text != "" {
		if s.msg == nil {
			s.msg = &rsItem{id: newItemID("msg_")}
			if err := s.add(s.msg); err != nil {
				return err
			}
		}
		s.msg.text.WriteString(c.Text)
		err := s.event("response.output_text.delta", func(b []byte) []byte {
			b = append(s.itemRef(b, s.msg), `,"content_index":0,"logprobs":[],"delta":`...)
			return json.AppendEscape(b, c.Text, 0)
		})
		if err != nil {
			return err
		}
	}
	if tc := c.ToolCall; tc != nil {
		it := s.tools[tc.Index]
		if it == nil {
			it = &rsItem{id: newItemID("fc_"), call: true, callID: tc.ID, name: tc.Name, tool: tc.Index}
			if it.callID == "" {
				it.callID = newItemID("call_")
			}
			if s.tools == nil {
				s.tools = make(map[int]*rsItem, 1)
			}
			s.tools[tc.Index] = it
			if err := s.add(it); err != nil {
				return err
			}
		}
		if tc.Arguments != "" {
			it.text.WriteString(tc.Arguments)
			return s.event("response.function_call_arguments.delta", func(b []byte) []byte {
				b = append(s.itemRef(b, it), `,"delta":`...)
				return json.AppendEscape(b, tc.Arguments, 0)
			})
		}
	}
	return nil
}

// finish closes every item and ends with response.completed (or
// response.incomplete). A relayed stream has ended with the upstream's own.
func (s *rsStream) finish(reason string, u provider.Usage) error {
	if s.raw {
		return nil
	}
	if err := s.begin(); err != nil {
		return err
	}
	s.a.finish, s.a.usage = reason, u
	if len(s.a.items) == 0 {
		// An empty answer is still one (empty) message, as OpenAI sends it.
		s.msg = &rsItem{id: newItemID("msg_")}
		if err := s.add(s.msg); err != nil {
			return err
		}
	}
	s.keeper.keep(s.a.items) // before the events that end the answer
	for _, it := range s.a.items {
		if err := s.close(it); err != nil {
			return err
		}
	}
	typ := "response.completed"
	if st, _ := s.a.status(); st == "incomplete" {
		typ = "response.incomplete"
	}
	return s.event(typ, func(b []byte) []byte { return s.a.appendObject(append(b, `,"response":`...), true) })
}

// close writes an item's .done events.
func (s *rsStream) close(it *rsItem) error {
	if it.call {
		err := s.event("response.function_call_arguments.done", func(b []byte) []byte {
			b = append(s.itemRef(b, it), `,"arguments":`...)
			return json.AppendEscape(b, it.text.String(), 0)
		})
		if err != nil {
			return err
		}
	} else {
		err := s.event("response.output_text.done", func(b []byte) []byte {
			b = append(s.itemRef(b, it), `,"content_index":0,"logprobs":[],"text":`...)
			return json.AppendEscape(b, it.text.String(), 0)
		})
		if err == nil {
			err = s.event("response.content_part.done", func(b []byte) []byte {
				return appendTextPart(append(s.itemRef(b, it), `,"content_index":0,"part":`...), it.text.String())
			})
		}
		if err != nil {
			return err
		}
	}
	return s.event("response.output_item.done", func(b []byte) []byte {
		b = append(b, `,"output_index":`...)
		b = appendInt(b, s.index(it))
		b = append(b, `,"item":`...)
		return appendItem(b, it, true)
	})
}

// fail ends the stream with an error event, numbered after the last event
// sent (a relayed stream's included).
func (s *rsStream) fail(e *apiError) error {
	if s.raw {
		s.seq = lastSequence(s.lastRaw) + 1
	}
	typ, code := openAITypeCode(e)
	if code == "" {
		code = typ
	}
	return s.event("error", func(b []byte) []byte {
		b = append(b, `,"code":`...)
		b = json.AppendEscape(b, code, 0)
		b = append(b, `,"message":`...)
		b = json.AppendEscape(b, e.message, 0)
		return append(b, `,"param":null`...)
	})
}

// lastSequence is the sequence_number of a relayed event (-1 if none).
func lastSequence(data []byte) int {
	n := -1
	_ = rawjson.EachField(data, func(k, v []byte) error {
		if string(k) == "sequence_number" {
			n, _ = rawjson.Int(v)
		}
		return nil
	})
	return n
}
