package openai

import (
	"errors"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// flags are the JSON library's flags for a request body, as
// httpcall.Marshal encodes it.
const flags = json.EscapeHTML | json.SortMapKeys

// translate is the body for a request from another dialect: the wire
// request encoded by the JSON library but for its messages, which
// appendWireMessage writes, each text the client sent whole (Part.Raw,
// see provider.Request.Lean) being the slice of its body it is. A long
// conversation translated from Anthropic's dialect is thus neither decoded
// nor encoded nor copied: it goes upstream as slices of the client's
// buffer between short runs of JSON written here.
func translate(req *provider.Request, model string, stream bool, q quirks) ([][]byte, []string, error) {
	var drops httpcall.Drops
	req, w, err := wireHead(req.Lean, model, stream, q, &drops)
	if err != nil {
		return nil, nil, err
	}
	env, err := json.Append(nil, w, flags)
	if err != nil {
		return nil, nil, err
	}
	// env is {"model":...,"messages":null,...}: the messages go in place
	// of the null.
	ms, err := rawjson.Members(env, nil)
	if err != nil {
		return nil, nil, err
	}
	at := -1
	for _, m := range ms {
		if m.Key == "messages" {
			at = m.Value
			break
		}
	}
	if at < 0 || string(env[at:at+4]) != "null" {
		return nil, nil, errNoMessages
	}
	// About two parts a message: JSON, then the client's text.
	p := bodyParts{out: make([][]byte, 0, 2*len(req.Messages)+4), buf: make([]byte, 0, glueSize(req))}
	p.out = append(p.out, env[:at])
	p.buf = append(p.buf, '[')
	first := true
	err = eachMessage(req, &drops, true, func(msgs []wireMessage) error {
		for i := range msgs {
			if !first {
				p.buf = append(p.buf, ',')
			}
			first = false
			if err := p.message(&msgs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	p.buf = append(p.buf, ']')
	p.cut()
	return append(p.out, env[at+4:]), drops.Names(), nil
}

// glueSize is about the length of the JSON that bodyParts.message writes
// for req's messages, less the client's texts it sends as they are.
func glueSize(req *provider.Request) int {
	n := 48 + len(req.System)*9/8
	for i := range req.Messages {
		n += 32
		for j := range req.Messages[i].Content {
			p := &req.Messages[i].Content[j]
			n += 8 + len(p.Text)*9/8
			switch {
			case p.ToolResult != nil: // a message of its own
				n += 48 + len(p.ToolResult.CallID) + len(p.ToolResult.Content)*9/8
			case p.ToolCall != nil:
				n += 64 + len(p.ToolCall.ID) + len(p.ToolCall.Name) + len(p.ToolCall.Arguments)*5/4
			case p.Raw != nil:
			default: // a content array's part
				n += 24
				if p.Image != nil {
					n += 48 + len(p.Image.URL) + len(p.Image.Data)
				}
			}
		}
	}
	return n
}

// errNoMessages is a wire request encoded without its messages key: a bug.
var errNoMessages = errors.New("openai: encoded request lacks messages")

// bodyParts is a body being written as parts: runs of buf, and slices of
// the client's body between them.
type bodyParts struct {
	out  [][]byte
	buf  []byte
	from int // where in buf the run not yet in out starts
}

// cut ends the run of buf being written.
func (p *bodyParts) cut() {
	if len(p.buf) > p.from {
		p.out = append(p.out, p.buf[p.from:len(p.buf):len(p.buf)])
		p.from = len(p.buf)
	}
}

// slice adds b, a slice of the client's body, as it is.
func (p *bodyParts) slice(b []byte) {
	p.cut()
	p.out = append(p.out, b)
}

// message writes m as the JSON library writes a wireMessage (its fields
// in order, the same escaping), but for a text given as its client's JSON
// string (raw, raws), which goes as it is.
func (p *bodyParts) message(m *wireMessage) error {
	b := append(p.buf, `{"role":`...)
	b = json.AppendEscape(b, m.Role, flags)
	p.buf = append(b, `,"content":`...)
	if err := p.content(m); err != nil {
		return err
	}
	b = p.buf
	if len(m.ToolCalls) > 0 {
		var err error
		if b, err = json.Append(append(b, `,"tool_calls":`...), m.ToolCalls, flags); err != nil {
			return err
		}
	}
	if m.ToolCallID != "" {
		b = json.AppendEscape(append(b, `,"tool_call_id":`...), m.ToolCallID, flags)
	}
	p.buf = append(b, '}')
	return nil
}

// content writes m's content: its raw string, a string, an array of
// encoded parts (a text part's text raw where raws has it) or null.
func (p *bodyParts) content(m *wireMessage) error {
	if m.raw != nil {
		p.slice(m.raw)
		return nil
	}
	switch c := m.Content.(type) {
	case nil:
		p.buf = append(p.buf, "null"...)
	case string:
		p.buf = json.AppendEscape(p.buf, c, flags)
	case []json.RawMessage:
		p.buf = append(p.buf, '[')
		for i, part := range c {
			if i > 0 {
				p.buf = append(p.buf, ',')
			}
			if i < len(m.raws) && m.raws[i] != nil {
				p.buf = append(p.buf, `{"type":"text","text":`...)
				p.slice(m.raws[i])
				p.buf = append(p.buf, '}')
				continue
			}
			p.buf = append(p.buf, part...) // encoded by the library
		}
		p.buf = append(p.buf, ']')
	default:
		var err error
		if p.buf, err = json.Append(p.buf, c, flags); err != nil {
			return err
		}
	}
	return nil
}
