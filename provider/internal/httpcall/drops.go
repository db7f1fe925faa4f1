package httpcall

import (
	"slices"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// This file: what a request loses on the way to a provider of another
// dialect, and the verbatim extras that go along.

// Drops collects the names of the request fields an encoder could not send
// to its provider (see provider.Response.Dropped), each once, in the order
// first met. The zero value is empty and ready to use.
type Drops struct{ names []string }

// Add records name.
func (d *Drops) Add(name string) {
	for _, n := range d.names {
		if n == name {
			return
		}
	}
	d.names = append(d.names, name)
}

// Extra records every key of extra, a request's or element's fields from
// another dialect, as prefix+key, in key order.
func (d *Drops) Extra(prefix string, extra map[string]json.RawMessage) {
	if len(extra) == 0 {
		return
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		d.Add(prefix + k)
	}
}

// Names returns the names recorded, nil when none.
func (d *Drops) Names() []string { return d.names }

// MessageExtras returns body (a JSON request object) with each element of
// its "messages" array merged with the Extra fields at the same index of
// extras (see MergeExtra; the element's role is kept). It returns body
// unchanged when no element has any.
func MessageExtras(body []byte, extras []map[string]json.RawMessage) ([]byte, error) {
	has := false
	for _, e := range extras {
		has = has || len(e) > 0
	}
	if !has {
		return body, nil
	}
	var msgs []byte
	err := rawjson.EachField(body, func(k, v []byte) error {
		if string(k) != "messages" {
			return nil
		}
		msgs = append(msgs, '[')
		i := 0
		return rawjson.EachElement(v, func(el []byte) error {
			out := json.RawMessage(el)
			if i < len(extras) && len(extras[i]) > 0 {
				var err error
				if out, err = MergeExtra(el, extras[i], "role"); err != nil {
					return err
				}
			}
			if i > 0 {
				msgs = append(msgs, ',')
			}
			msgs = append(msgs, out...)
			i++
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	msgs = append(msgs, ']')
	return rawjson.Splice(nil, body, []rawjson.Field{{Key: "messages", Value: msgs, Mode: rawjson.Replace}})
}

// Request records what a request from another dialect loses on the way to
// this adapter's: its Lossy names, its anthropic-beta header, then each
// Extra key that is not the
// whole of a field named there (whose value is in Extra only for the
// client's own dialect), in key order.
func (d *Drops) Request(req *provider.Request) {
	for _, n := range req.Lossy {
		d.Add(n)
	}
	if req.Headers["anthropic-beta"] != "" {
		d.Add("anthropic-beta (header)") // beta features are Anthropic's
	}
	if len(req.Extra) == 0 {
		return
	}
	keys := make([]string, 0, len(req.Extra))
next:
	for k := range req.Extra {
		for _, n := range req.Lossy {
			if r, ok := strings.CutPrefix(n, k); ok && (r == "" || r[0] == '.' || r[0] == '[') {
				continue next
			}
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		d.Add(k)
	}
}

// FieldName is the name, in a request of dialect, of the canonical field
// named canonical (its OpenAI name), for Drops: "response_format" is
// Anthropic's "output_config.format".
func FieldName(dialect, canonical string) string {
	if dialect == "anthropic" {
		switch canonical {
		case "response_format":
			return "output_config.format"
		case "parallel_tool_calls":
			return "tool_choice.disable_parallel_tool_use"
		case "user":
			return "metadata.user_id"
		case "stop":
			return "stop_sequences"
		}
	}
	return canonical
}

// Marshal is json.Marshal of an adapter's wire request for req, encoded
// into one buffer sized for it (SizeHint) rather than grown and copied: a
// long conversation translated to another dialect is its largest
// allocation.
func Marshal(v any, req *provider.Request) ([]byte, error) {
	return json.Append(make([]byte, 0, SizeHint(req)), v, json.EscapeHTML|json.SortMapKeys)
}

// SizeHint is about the size of req encoded in any dialect: its text and
// raw values, a quarter more for escapes, and some bytes per part.
func SizeHint(req *provider.Request) int {
	n := 512 + len(req.System)
	for _, m := range req.Messages {
		n += 32
		for _, p := range m.Content {
			n += 64 + len(p.Text)
			if p.ToolCall != nil {
				n += len(p.ToolCall.Name) + len(p.ToolCall.Arguments)
			}
			if p.ToolResult != nil {
				n += len(p.ToolResult.Content)
			}
			if p.Image != nil {
				n += len(p.Image.URL) + len(p.Image.Data)
			}
		}
	}
	for _, t := range req.Tools {
		n += 64 + len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n + n/4
}
