package gateway

import (
	"bytes"
	"fmt"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// This file decodes the Responses API fields that shape the answer: tools,
// tool_choice and text (formats), into the canonical request and Chat
// Completions' Extra fields.

// tools decodes function tools; a hosted tool (web_search, file_search,
// mcp, ...) needs a relaying target. Strict tools ride in Extra as Chat
// Completions tools, so an OpenAI-compatible chat target keeps strict.
func (d *rsDecoder) tools(v json.RawMessage) error {
	if rawjson.IsNull(v) {
		return nil
	}
	var tools []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
	}
	if err := rawjson.Unmarshal(v, &tools); err != nil {
		return err
	}
	r := d.in.req
	strict := false
	for _, t := range tools {
		if t.Type != "function" {
			d.need("tool " + t.Type)
			continue
		}
		r.Tools = append(r.Tools, provider.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		strict = strict || (t.Strict != nil && *t.Strict)
	}
	if strict {
		b := []byte{'['}
		for i, t := range tools {
			if t.Type != "function" {
				continue
			}
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = append(b, `{"type":"function","function":{"name":`...)
			b = json.AppendEscape(b, t.Name, 0)
			if t.Description != "" {
				b = append(b, `,"description":`...)
				b = json.AppendEscape(b, t.Description, 0)
			}
			if len(t.Parameters) > 0 {
				b = append(b, `,"parameters":`...)
				b = append(b, t.Parameters...)
			}
			if t.Strict != nil {
				b = append(b, `,"strict":`...)
				b = append(b, fmt.Sprint(*tools[i].Strict)...)
			}
			b = append(b, "}}"...)
		}
		setExtra(&r.Extra, "tools", append(b, ']'))
	}
	return nil
}

// toolChoice decodes "auto", "none", "required", a function, or
// allowed_tools (its mode); a hosted tool's choice needs a relaying target.
func (d *rsDecoder) toolChoice(v json.RawMessage) error {
	r := d.in.req
	v = bytes.TrimSpace(v)
	if len(v) == 0 || rawjson.IsNull(v) {
		return nil
	}
	if v[0] == '"' {
		s, err := rawjson.String(v)
		r.ToolChoice = &provider.ToolChoice{Mode: s}
		return err
	}
	var tc struct {
		Type string `json:"type"`
		Name string `json:"name"`
		Mode string `json:"mode"`
	}
	if err := rawjson.Unmarshal(v, &tc); err != nil {
		return err
	}
	switch tc.Type {
	case "function":
		r.ToolChoice = &provider.ToolChoice{Mode: "tool", Name: tc.Name}
	case "allowed_tools":
		r.ToolChoice = &provider.ToolChoice{Mode: tc.Mode}
	default:
		d.need("tool_choice " + tc.Type)
	}
	return nil
}

// text maps text.format to Chat Completions' response_format and keeps
// text.verbosity (both in Extra).
func (d *rsDecoder) text(v json.RawMessage) error {
	if rawjson.IsNull(v) {
		return nil
	}
	var t struct {
		Format *struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Strict      *bool           `json:"strict"`
		} `json:"format"`
		Verbosity string `json:"verbosity"`
	}
	if err := rawjson.Unmarshal(v, &t); err != nil {
		return err
	}
	r := d.in.req
	if t.Verbosity != "" {
		setExtra(&r.Extra, "verbosity", json.AppendEscape(nil, t.Verbosity, 0))
	}
	if f := t.Format; f != nil {
		switch f.Type {
		case "json_object":
			setExtra(&r.Extra, "response_format", []byte(`{"type":"json_object"}`))
		case "json_schema":
			js := map[string]any{"name": f.Name}
			if f.Description != "" {
				js["description"] = f.Description
			}
			if len(f.Schema) > 0 {
				js["schema"] = f.Schema
			}
			if f.Strict != nil {
				js["strict"] = *f.Strict
			}
			b, err := json.Marshal(map[string]any{"type": "json_schema", "json_schema": js})
			if err != nil {
				return err
			}
			setExtra(&r.Extra, "response_format", b)
		}
	}
	return nil
}
