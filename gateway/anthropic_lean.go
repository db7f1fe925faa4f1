package gateway

import (
	"bytes"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// A lean decoding (inbound.lean) of an Anthropic request reads its
// messages in one pass (leanMessages), with no map per block, for the
// shapes an agent sends on every turn: text blocks, tool_use blocks, and
// tool_result blocks whose content is a string or one text block, with no
// other keys, each text left in the client's body (Part.Raw) and checked
// (rawjson.Verbatim) as it is read. Walking the messages, then each
// content, then checking each text read a long conversation's texts three
// times. It checks every value it takes as the whole decoder would; a
// content of any other shape is decoded as ever (anContent), and for
// anything else unusual (a key twice, a value of the wrong type, malformed
// JSON) the caller decodes the messages as ever (decodeANMessages), which
// gives the same parts or the error (FuzzLeanDecoding).

// leanMessages decodes the messages v into r for a lean decoding; false
// when the caller must decode them as ever.
func leanMessages(v []byte, r *provider.Request) bool {
	var c rawjson.Cursor
	c.Reset(v)
	if !c.Array() {
		return false
	}
	n := len(v)>>10 + 4 // about a message a KB: grown if more
	msgs := make([]provider.Message, 0, n)
	arena := make([]provider.Part, 0, n+n/4) // the conversation's parts, more in another (addPart)
	for c.NextObject() {
		role, parts, extra, ok := leanMessage(&c, &arena)
		if !ok {
			return false
		}
		msgs = appendANMessage(msgs, role, parts, extra)
	}
	if !c.Done() {
		return false
	}
	r.Messages = msgs
	return true
}

// leanMessage reads the fields of the message object at c.
func leanMessage(c *rawjson.Cursor, arena *[]provider.Part) (role string, parts []provider.Part, extra map[string]json.RawMessage, ok bool) {
	var hasRole, hasContent bool
	for {
		key, more := c.NextKey()
		if !more {
			break
		}
		switch string(key) {
		case "role":
			if hasRole {
				return "", nil, nil, false
			}
			hasRole, role = true, leanRole(c)
		case "content":
			if hasContent {
				return "", nil, nil, false
			}
			hasContent = true
			at := *c
			if parts, ok = leanBlocks(c, arena); !ok {
				*c = at // decode it as ever
				v := c.Raw()
				var err error
				if parts, err = anContent(v, true); err != nil || c.Failed() {
					return "", nil, nil, false
				}
			}
		default:
			k := keyString(key)
			if v := c.Raw(); v != nil {
				setExtra(&extra, k, v) // clear_at, output_config...
			}
		}
	}
	return role, parts, extra, !c.Failed()
}

// leanRole reads a message's role at c, as Text would, the usual ones
// without allocating.
func leanRole(c *rawjson.Cursor) string {
	switch v := c.Verbatim(); string(v) {
	case `"user"`:
		return provider.RoleUser
	case `"assistant"`:
		return provider.RoleAssistant
	case "": // not a string Verbatim takes
		return c.Text("")
	default:
		s, _ := rawjson.String(v) // Verbatim: it decodes
		return s
	}
}

// leanContent is leanBlocks of the content array v alone (arena as
// there); ok is false for anything but an array.
func leanContent(v []byte, arena *[]provider.Part) (parts []provider.Part, ok bool) {
	if len(v) == 0 || v[0] != '[' {
		return nil, false
	}
	var own []provider.Part
	if arena == nil {
		arena = &own
	}
	var c rawjson.Cursor
	c.Reset(v)
	if parts, ok = leanBlocks(&c, arena); ok && !c.Done() {
		*arena, ok = (*arena)[:len(*arena)-len(parts)], false
	}
	if !ok {
		return nil, false
	}
	return parts, true
}

// leanBlocks reads a message's content at c, a string or an array of
// blocks, appending its parts to arena (one array for many messages'
// parts, rather than one per message: addPart): the slice returned has no
// room past its end, so that appending to it never reaches its
// neighbours'. Not ok (c then in no state to go on, arena as it was) for
// a content of another shape, which the caller decodes as ever.
func leanBlocks(c *rawjson.Cursor, arena *[]provider.Part) ([]provider.Part, bool) {
	start := len(*arena)
	if raw := c.Verbatim(); raw != nil {
		start = addPart(arena, start, provider.Part{Type: provider.PartText, Raw: raw})
		return (*arena)[start:len(*arena):len(*arena)], true
	}
	if c.Null() || !c.Array() {
		return nil, !c.Failed() // null: no parts
	}
	for c.NextObject() {
		p, ok := readBlock(c)
		if !ok {
			*arena = (*arena)[:start]
			return nil, false
		}
		start = addPart(arena, start, p)
	}
	if c.Failed() {
		*arena = (*arena)[:start]
		return nil, false
	}
	parts := (*arena)[start:len(*arena):len(*arena)]
	if parts == nil {
		parts = []provider.Part{} // as decodeContent gives an empty array
	}
	return parts, true
}

// addPart appends p to the message's parts being read, (*arena)[start:],
// and returns where they start: those of a full arena move to a new one,
// of at least half its size (the parts before stay where they are, in
// their messages' slices of it).
func addPart(arena *[]provider.Part, start int, p provider.Part) int {
	if a := *arena; len(a) == cap(a) {
		*arena = append(make([]provider.Part, 0, max(2*(len(a)-start), cap(a)/2, 16)), a[start:]...)
		start = 0
	}
	*arena = append(*arena, p)
	return start
}

// readBlock reads the fields of the content block object at c.
func readBlock(c *rawjson.Cursor) (provider.Part, bool) {
	var b leanBlock
	for {
		key, more := c.NextKey()
		if !more {
			break
		}
		f := b.field(key)
		switch {
		case f == nil:
			return provider.Part{}, false
		case f == &b.text:
			b.text = c.Verbatim()
		case f == &b.content:
			b.content = leanResult(c)
		default:
			*f = c.Raw()
		}
		if *f == nil {
			return provider.Part{}, false
		}
	}
	if c.Failed() {
		return provider.Part{}, false
	}
	return b.part()
}

// leanResult reads a tool result's content at c as a text left in the
// body: a string, null, or an array of one text block; nil for anything
// else.
func leanResult(c *rawjson.Cursor) []byte {
	if raw := c.Verbatim(); raw != nil {
		return raw
	}
	if c.Null() {
		return []byte("null")
	}
	if !c.Array() || !c.NextObject() {
		return nil
	}
	p, ok := readBlock(c)
	if !ok || p.Type != provider.PartText || c.Next() {
		return nil
	}
	return p.Raw
}

// leanBlock is a content block's fields, as they are in the body: text and
// content are texts that may be sent as they are (rawjson.Verbatim), or
// content is null.
type leanBlock struct {
	typ, text, id, name, input, toolUseID, content, isError []byte
}

// field is where to keep the value of key; nil for a key leanBlock leaves
// to the whole decoder, or a key seen twice.
func (b *leanBlock) field(key []byte) *[]byte {
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
		return nil
	}
	if *f != nil {
		return nil
	}
	return f
}

// part is the block as decodeANContent decodes it, if leanBlock can.
func (b *leanBlock) part() (provider.Part, bool) {
	switch string(b.typ) {
	case `"text"`:
		if b.id != nil || b.name != nil || b.input != nil || b.toolUseID != nil || b.content != nil || b.isError != nil ||
			b.text == nil {
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
	if err1 != nil || err2 != nil {
		return provider.Part{}, false
	}
	// The input (read whole and checked) stays in the body, which the
	// decoded request keeps.
	tc.Arguments = bytes.TrimSpace(b.input)
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
	if !rawjson.IsNull(b.content) {
		p.Raw = b.content
	}
	return p, true
}
