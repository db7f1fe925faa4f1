package openai

import (
	"fmt"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// appendMessage encodes one canonical message with c (whose buffers the
// messages appended point into: c.reuse reuses them for the next).
// Tool results become one "tool" message each, placed before the rest of
// the message so they follow the assistant turn that asked for them; tool
// calls go in tool_calls; a single plain text part is sent as a string.
func appendMessage(out []wireMessage, m *provider.Message, c *content) ([]wireMessage, error) {
	same, drops := c.same, c.drops
	switch m.Role {
	case provider.RoleUser, provider.RoleAssistant, provider.RoleTool, provider.RoleSystem, "developer":
	default:
		if !same {
			drops.Add("messages[role=" + m.Role + "]")
			return out, nil
		}
	}
	if !same {
		drops.Extra("messages[].", m.Extra)
	}
	c.reset()
	for j := range m.Content {
		var err error
		if out, err = c.add(out, &m.Content[j], j); err != nil {
			return nil, err
		}
	}
	return c.message(out, m), nil
}

// content collects one message's parts as Chat Completions takes them.
// Its buffers serve one message after another if reuse (reset).
type content struct {
	same  bool // the request is in this dialect: its extras are sent
	drops *httpcall.Drops
	reuse bool // a message's buffers are the last one's
	parts []json.RawMessage
	raws  [][]byte // a text part's Part.Raw, by parts' index (nil: none)
	calls []wireToolCall
	text  string // the last text part
	// textRaw is the last text part's Part.Raw (text is then "").
	textRaw []byte
	texts   int  // how many text parts
	rich    bool // a part that only a content array can carry
}

// reset empties c for the next message, keeping its buffers if c.reuse
// (parts and raws stay in step: raws, once made, gets an entry for each
// part).
func (c *content) reset() {
	if c.reuse {
		*c = content{same: c.same, drops: c.drops, reuse: true, parts: c.parts[:0], raws: c.raws[:0], calls: c.calls[:0]}
	} else {
		*c = content{same: c.same, drops: c.drops}
	}
}

// add adds part j, p; a tool result is appended to out as a message of its
// own.
func (c *content) add(out []wireMessage, p *provider.Part, j int) ([]wireMessage, error) {
	if !c.same {
		c.drops.Extra("messages[].content[].", p.Extra)
	}
	if !httpcall.KnownPart(p) {
		if !c.same {
			c.drops.Add("messages[].content[type=" + p.Type + "]")
			return out, nil // another dialect's part (thinking, document...)
		}
		raw, err := httpcall.RawPart(p)
		if err != nil {
			return nil, err
		}
		c.rich = true
		c.add1(raw, nil)
		return out, nil
	}
	switch p.Type {
	case provider.PartToolResult:
		if p.ToolResult == nil {
			return nil, fmt.Errorf("part %d: tool_result part without result", j)
		}
		tm := wireMessage{Role: "tool", ToolCallID: p.ToolResult.CallID, Content: p.ToolResult.Content, raw: p.Raw}
		if p.Raw != nil && c.same {
			tm.Content, tm.raw = textOf(p), nil // the library writes it
		}
		return append(out, tm), nil
	case provider.PartToolCall:
		if p.ToolCall == nil {
			return nil, fmt.Errorf("part %d: tool_call part without tool call", j)
		}
		var tc wireToolCall
		tc.ID, tc.Type = p.ToolCall.ID, "function"
		tc.Function.Name = p.ToolCall.Name
		tc.Function.Arguments = string(p.ToolCall.Arguments)
		if tc.Function.Arguments == "" || tc.Function.Arguments == "null" {
			tc.Function.Arguments = "{}"
		}
		c.calls = append(c.calls, tc)
	case provider.PartText:
		return out, c.addText(p)
	case provider.PartImage:
		if p.Image == nil {
			return nil, fmt.Errorf("part %d: image part without image", j)
		}
		return out, c.addImage(p)
	}
	return out, nil
}

// add1 adds one encoded part, whose text is text when that is set (a
// Part.Raw).
func (c *content) add1(part json.RawMessage, text []byte) {
	if text != nil && c.raws == nil {
		c.raws = make([][]byte, len(c.parts), cap(c.parts)+1)
	}
	c.parts = append(c.parts, part)
	if c.raws != nil {
		c.raws = append(c.raws, text)
	}
}

func (c *content) addText(p *provider.Part) error {
	c.texts++
	if p.Raw != nil && !c.same && len(p.Raw) > 2 { // "" is no "text" in a part
		c.text, c.textRaw = "", p.Raw
		c.add1(nil, p.Raw)
		return nil
	}
	c.text, c.textRaw = textOf(p), nil
	raw, err := json.Marshal(wirePart{Type: "text", Text: c.text})
	if err == nil && c.same && len(p.Extra) > 0 {
		c.rich = true
		raw, err = httpcall.MergeExtra(raw, p.Extra, "type")
	}
	if err != nil {
		return err
	}
	c.add1(raw, nil)
	return nil
}

// textOf is p's text (Text, or ToolResult.Content for a tool result),
// decoded from p.Raw when it is there.
func textOf(p *provider.Part) string {
	if p.Raw == nil {
		return p.Text
	}
	s, _ := rawjson.String(p.Raw) // rawjson.Verbatim: it decodes
	return s
}

func (c *content) addImage(p *provider.Part) error {
	c.rich = true
	u := p.Image.URL
	if p.Image.Data != "" {
		u = "data:" + p.Image.MediaType + ";base64," + p.Image.Data
	}
	iu := &wireImageURL{URL: u}
	var extra map[string]json.RawMessage
	if c.same && len(p.Extra) > 0 {
		// "detail" belongs inside image_url; anything else beside it.
		extra = make(map[string]json.RawMessage, len(p.Extra))
		for k, v := range p.Extra {
			if k == "detail" {
				iu.Detail = v
			} else {
				extra[k] = v
			}
		}
	}
	raw, err := json.Marshal(wirePart{Type: "image_url", ImageURL: iu})
	if err == nil {
		raw, err = httpcall.MergeExtra(raw, extra, "type")
	}
	if err != nil {
		return err
	}
	c.add1(raw, nil)
	return nil
}

// message appends m's message, if anything is left of it once its tool
// results went out as messages of their own.
func (c *content) message(out []wireMessage, m *provider.Message) []wireMessage {
	role := m.Role
	if role == provider.RoleTool {
		// A tool message whose parts were all tool results is done.
		if len(c.parts) == 0 {
			return out
		}
		role = provider.RoleUser
	}
	if len(c.parts) == 0 && len(c.calls) == 0 {
		if role == provider.RoleAssistant || len(m.Content) > 0 {
			return out // nothing but tool results
		}
		return append(out, wireMessage{Role: role, Content: ""})
	}
	wm := wireMessage{Role: role, ToolCalls: c.calls}
	if c.same {
		wm.extra = m.Extra
	}
	switch {
	case c.rich:
		wm.Content, wm.raws = c.parts, c.raws
	case c.texts == 1:
		wm.Content, wm.raw = c.text, c.textRaw
	case c.texts > 1 && role == provider.RoleAssistant:
		// Assistant content arrays are text-only; join them.
		s := ""
		for j := range m.Content {
			if m.Content[j].Type == provider.PartText {
				s += textOf(&m.Content[j])
			}
		}
		wm.Content = s
	case c.texts > 1:
		wm.Content, wm.raws = c.parts, c.raws
	default:
		wm.Content = nil // assistant turn with tool calls only
	}
	return append(out, wm)
}
