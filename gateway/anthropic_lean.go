package gateway

import (
	"bytes"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// leanContent decodes an Anthropic message's array of content blocks for a
// lean decoding (inbound.lean) in one walk, with no map per block, for the
// shapes an agent sends on every turn: text blocks, tool_use blocks, and
// tool_result blocks whose content is a string or one text block, with no
// other keys, each text left in the client's body (Part.Raw). It checks
// every value it takes as the whole decoder would; ok is false for
// anything else, and the caller then decodes v as ever (decodeANContent),
// which gives the same parts or the error (FuzzLeanDecoding).
//
// The parts are appended to arena when it is not nil (one array for a
// whole conversation's parts, rather than one per message), and the
// slice returned has no room past its end, so that appending to it never
// reaches its neighbours'.
func leanContent(v []byte, arena *[]provider.Part) (parts []provider.Part, ok bool) {
	if len(v) == 0 || v[0] != '[' {
		return nil, false
	}
	var own []provider.Part
	if arena == nil {
		arena = &own
	}
	start := len(*arena)
	var b leanBlock
	err := rawjson.EachObject(v, func(key, val []byte) error {
		if !b.set(key, val) {
			return errStop
		}
		return nil
	}, func(_ int, el []byte) error {
		p, ok := b.part()
		if !ok || el[0] != '{' {
			return errStop
		}
		*arena = append(*arena, p)
		b = leanBlock{}
		return nil
	})
	if err != nil {
		*arena = (*arena)[:start]
		return nil, false
	}
	if parts = (*arena)[start:len(*arena):len(*arena)]; parts == nil {
		parts = []provider.Part{} // as decodeContent gives an empty array
	}
	return parts, true
}

// leanBlock is a content block's fields, as they are in the body.
type leanBlock struct {
	typ, text, id, name, input, toolUseID, content, isError []byte
}

// set takes one field; false for a key leanContent leaves to the whole
// decoder, or a key seen twice.
func (b *leanBlock) set(key, val []byte) bool {
	var f *[]byte
	switch string(key) {
	case "type":
		f = &b.typ
	case "text":
		f = &b.text
	case "id":
		f = &b.id
	case "name":
		f = &b.name
	case "input":
		f = &b.input
	case "tool_use_id":
		f = &b.toolUseID
	case "content":
		f = &b.content
	case "is_error":
		f = &b.isError
	default:
		return false
	}
	if *f != nil {
		return false
	}
	*f = val
	return true
}

// part is the block as decodeANContent decodes it, if leanContent can.
func (b *leanBlock) part() (provider.Part, bool) {
	switch string(b.typ) {
	case `"text"`:
		if b.id != nil || b.name != nil || b.input != nil || b.toolUseID != nil || b.content != nil || b.isError != nil ||
			!rawjson.Verbatim(b.text) {
			return provider.Part{}, false
		}
		return provider.Part{Type: provider.PartText, Raw: b.text}, true
	case `"tool_use"`:
		return b.toolUse()
	case `"tool_result"`:
		return b.toolResult()
	}
	return provider.Part{}, false
}

func (b *leanBlock) toolUse() (provider.Part, bool) {
	if b.text != nil || b.toolUseID != nil || b.content != nil || b.isError != nil {
		return provider.Part{}, false
	}
	tc := &provider.ToolCall{}
	var err1, err2 error
	tc.ID, err1 = rawjson.String(b.id)
	tc.Name, err2 = rawjson.String(b.name)
	if err1 != nil || err2 != nil || b.input != nil && !rawjson.Valid(b.input) {
		return provider.Part{}, false
	}
	tc.Arguments = append(json.RawMessage(nil), bytes.TrimSpace(b.input)...)
	if len(tc.Arguments) == 0 {
		tc.Arguments = json.RawMessage(`{}`)
	}
	return provider.Part{Type: provider.PartToolCall, ToolCall: tc}, true
}

func (b *leanBlock) toolResult() (provider.Part, bool) {
	if b.text != nil || b.id != nil || b.name != nil || b.input != nil {
		return provider.Part{}, false
	}
	tr := &provider.ToolResult{}
	var err error
	if tr.CallID, err = rawjson.String(b.toolUseID); err != nil {
		return provider.Part{}, false
	}
	switch string(b.isError) {
	case "true":
		tr.IsError = true
	case "", "false", "null":
	default:
		return provider.Part{}, false
	}
	p := provider.Part{Type: provider.PartToolResult, ToolResult: tr}
	switch {
	case rawjson.IsNull(b.content):
		return p, true
	case b.content[0] == '"':
		p.Raw = b.content
	default:
		inner, ok := leanContent(b.content, nil)
		if !ok || len(inner) != 1 || inner[0].Type != provider.PartText {
			return provider.Part{}, false
		}
		p.Raw = inner[0].Raw
	}
	return p, rawjson.Verbatim(p.Raw)
}
