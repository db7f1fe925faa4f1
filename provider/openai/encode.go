package openai

import (
	"fmt"
	"math"
	"strconv"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// Dialect is the value of provider.Request.Dialect for requests that arrived
// in the OpenAI Chat Completions format; their Extra fields are sent
// unchanged to every adapter of this package.
const Dialect = "openai"

type wireRequest struct {
	Model               string            `json:"model"`
	Messages            []wireMessage     `json:"messages"`
	MaxTokens           int               `json:"max_tokens,omitempty"`
	MaxCompletionTokens int               `json:"max_completion_tokens,omitempty"`
	Temperature         *float64          `json:"temperature,omitempty"`
	TopP                *float64          `json:"top_p,omitempty"`
	Stop                []string          `json:"stop,omitempty"`
	Metadata            map[string]string `json:"metadata,omitempty"`
	Tools               []wireTool        `json:"tools,omitempty"`
	ToolChoice          any               `json:"tool_choice,omitempty"`
	Stream              bool              `json:"stream,omitempty"`
	StreamOptions       *streamOptions    `json:"stream_options,omitempty"`
	ResponseFormat      *wireFormat       `json:"response_format,omitempty"`
	Seed                *int              `json:"seed,omitempty"`
	User                string            `json:"user,omitempty"`
	ParallelToolCalls   *bool             `json:"parallel_tool_calls,omitempty"`
}

type wireFormat struct {
	Type       string          `json:"type"`
	JSONSchema *wireJSONSchema `json:"json_schema,omitempty"`
}

type wireJSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type namedChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

type wireMessage struct {
	Role       string                     `json:"role"`
	Content    any                        `json:"content"` // string, []json.RawMessage or nil
	ToolCalls  []wireToolCall             `json:"tool_calls,omitempty"`
	ToolCallID string                     `json:"tool_call_id,omitempty"`
	extra      map[string]json.RawMessage // the message's Extra, same dialect only
}

type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wirePart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL    string          `json:"url"`
	Detail json.RawMessage `json:"detail,omitempty"`
}

// Encode returns the Chat Completions body for req, addressed to model, with
// the quirks of the OpenAI provider itself. See the package doc for the
// mapping.
func Encode(req *provider.Request, model string, stream bool) ([]byte, error) {
	body, _, err := encode(req, model, stream, quirksFor("openai"))
	return body, err
}

// encode is Encode with the quirks q that also names the fields it could
// not send.
func encode(req *provider.Request, model string, stream bool, q quirks) ([]byte, []string, error) {
	same := req.Dialect == Dialect
	if chatRelayed(req) {
		return splice(req, model, stream, q)
	}
	var drops httpcall.Drops
	w := wireRequest{Model: model, Temperature: req.Temperature, TopP: req.TopP, Stop: req.Stop, Stream: stream}
	if !same {
		drops.Request(req)
		if len(w.Stop) > 4 {
			w.Stop = w.Stop[:4] // the API takes at most 4 stop sequences
			drops.Add("stop_sequences[4:]")
		}
	}
	if req.MaxTokens > 0 {
		if q.maxCompletionTokens {
			w.MaxCompletionTokens = req.MaxTokens
		} else {
			w.MaxTokens = req.MaxTokens
		}
	}
	// OpenAI rejects metadata unless store is enabled, which only a request
	// in its own dialect can ask for (Extra "store"); from another dialect
	// (Anthropic's metadata.user_id) it is dropped rather than risk a 400.
	if q.metadata && same && len(req.Metadata) > 0 {
		w.Metadata = req.Metadata
	} else {
		for k := range req.Metadata {
			drops.Add("metadata." + k)
		}
	}
	if stream && !q.noStreamOptions {
		w.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	w.Seed, w.User = req.Seed, req.User
	if req.TopK != nil {
		drops.Add(httpcall.FieldName(req.Dialect, "top_k"))
	}
	if rf := req.ResponseFormat; rf != nil {
		w.ResponseFormat = &wireFormat{Type: rf.Type}
		if rf.Type == "json_schema" {
			name := rf.Name
			if name == "" {
				name = "response" // required by the API
			}
			w.ResponseFormat.JSONSchema = &wireJSONSchema{Name: name, Description: rf.Description, Schema: rf.Schema, Strict: rf.Strict}
		}
	}
	if len(req.Tools) > 0 {
		w.ParallelToolCalls = req.ParallelToolCalls // refused without tools
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Type: "function",
			Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	if tc := req.ToolChoice; tc != nil {
		switch tc.Mode {
		case "auto", "":
			w.ToolChoice = "auto"
		case "none":
			w.ToolChoice = "none"
		case "required":
			w.ToolChoice = "required"
		case "tool":
			var nc namedChoice
			nc.Type = "function"
			nc.Function.Name = tc.Name
			w.ToolChoice = nc
		default:
			return nil, nil, fmt.Errorf("unknown tool_choice mode %q", tc.Mode)
		}
	}
	w.Messages = make([]wireMessage, 0, len(req.Messages)+1)
	if req.System != "" {
		w.Messages = append(w.Messages, wireMessage{Role: "system", Content: req.System})
	}
	for i := range req.Messages {
		var err error
		if w.Messages, err = appendMessage(w.Messages, &req.Messages[i], same, &drops); err != nil {
			return nil, nil, fmt.Errorf("message %d: %w", i, err)
		}
	}
	body, ok := appendRequest(nil, &w)
	if !ok {
		var err error
		if body, err = json.Marshal(&w); err != nil {
			return nil, nil, err
		}
	}
	if !same {
		return body, drops.Names(), nil
	}
	extras := make([]map[string]json.RawMessage, len(w.Messages))
	for i := range w.Messages {
		extras[i] = w.Messages[i].extra
	}
	body, err := httpcall.MessageExtras(body, extras)
	if err == nil {
		body, err = httpcall.MergeExtra(body, req.Extra, "model", "stream", "stream_options")
	}
	return body, drops.Names(), err
}

// chatRelayed reports whether req carries its client's Chat Completions body.
func chatRelayed(req *provider.Request) bool {
	return req.Passthrough != nil && req.Passthrough.Dialect == Dialect && req.Dialect == Dialect
}

// splice is the client's own body with the fields the adapter controls set:
// model, stream and stream_options (usage is always asked for, where the
// provider takes the option), and the provider's quirks (max_tokens for a
// provider that lacks max_completion_tokens, no metadata where it is
// refused).
func splice(req *provider.Request, model string, stream bool, q quirks) ([]byte, []string, error) {
	m := json.AppendEscape(make([]byte, 0, len(model)+2), model, 0)
	fields := []rawjson.Field{{Key: "model", Value: m}}
	if stream {
		fields = append(fields, rawjson.Field{Key: "stream", Value: []byte("true")})
		if q.noStreamOptions {
			fields = append(fields, rawjson.Field{Key: "stream_options", Mode: rawjson.Delete})
		} else if !includesUsage(req.Passthrough.Body) {
			fields = append(fields, rawjson.Field{Key: "stream_options", Value: []byte(`{"include_usage":true}`)})
		}
	} else {
		fields = append(fields, rawjson.Field{Key: "stream", Value: []byte("false"), Mode: rawjson.Replace},
			rawjson.Field{Key: "stream_options", Mode: rawjson.Delete})
	}
	var dropped []string
	if req.MaxTokens > 0 {
		// One limit, under the name the provider takes (OpenAI's reasoning
		// models refuse max_tokens; most compatible servers know only it).
		// The canonical MaxTokens is max_tokens, or max_completion_tokens
		// when the client sent only that.
		name, other := "max_tokens", "max_completion_tokens"
		if q.maxCompletionTokens {
			name, other = other, name
		}
		fields = append(fields, rawjson.Field{Key: other, Mode: rawjson.Delete},
			rawjson.Field{Key: name, Value: strconv.AppendInt(nil, int64(req.MaxTokens), 10)})
	}
	if !q.metadata && len(req.Metadata) > 0 {
		fields = append(fields, rawjson.Field{Key: "metadata", Mode: rawjson.Delete})
		dropped = []string{"metadata"}
	}
	raw := req.Passthrough.Body
	body, err := rawjson.Splice(make([]byte, 0, len(raw)+48), raw, fields)
	return body, dropped, err
}

// includesUsage reports whether a request body's stream_options asks for usage.
func includesUsage(raw []byte) bool {
	found := false
	_ = rawjson.EachField(raw, func(k, v []byte) error {
		if string(k) == "stream_options" {
			_ = rawjson.EachField(v, func(k, v []byte) error {
				found = found || (string(k) == "include_usage" && string(v) == "true")
				return nil
			})
		}
		return nil
	})
	return found
}

// appendMessage encodes one canonical message. Tool results become one
// "tool" message each, placed before the rest of the message so they follow
// the assistant turn that asked for them; tool calls go in tool_calls; a
// single plain text part is sent as a string.
func appendMessage(out []wireMessage, m *provider.Message, same bool, drops *httpcall.Drops) ([]wireMessage, error) {
	role := m.Role
	switch role {
	case provider.RoleUser, provider.RoleAssistant, provider.RoleTool, provider.RoleSystem, "developer":
	default:
		if !same {
			drops.Add("messages[role=" + role + "]")
			return out, nil
		}
	}
	if !same {
		drops.Extra("messages[].", m.Extra)
	}
	var parts []json.RawMessage
	var calls []wireToolCall
	var text string
	texts, rich := 0, false
	for j := range m.Content {
		p := &m.Content[j]
		if !same {
			drops.Extra("messages[].content[].", p.Extra)
		}
		if !httpcall.KnownPart(p) {
			if !same {
				drops.Add("messages[].content[type=" + p.Type + "]")
				continue // another dialect's part (thinking, document...)
			}
			raw, err := httpcall.RawPart(p)
			if err != nil {
				return nil, err
			}
			rich = true
			parts = append(parts, raw)
			continue
		}
		switch p.Type {
		case provider.PartToolResult:
			if p.ToolResult == nil {
				return nil, fmt.Errorf("part %d: tool_result part without result", j)
			}
			out = append(out, wireMessage{Role: "tool", ToolCallID: p.ToolResult.CallID, Content: p.ToolResult.Content})
			continue
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
			calls = append(calls, tc)
			continue
		case provider.PartText:
			texts++
			text = p.Text
			raw := appendTextPart(nil, p.Text)
			var err error
			if same && len(p.Extra) > 0 {
				rich = true
				if raw, err = httpcall.MergeExtra(raw, p.Extra, "type"); err != nil {
					return nil, err
				}
			}
			parts = append(parts, raw)
		case provider.PartImage:
			if p.Image == nil {
				return nil, fmt.Errorf("part %d: image part without image", j)
			}
			rich = true
			u := p.Image.URL
			if p.Image.Data != "" {
				u = "data:" + p.Image.MediaType + ";base64," + p.Image.Data
			}
			iu := &wireImageURL{URL: u}
			var extra map[string]json.RawMessage
			if same && len(p.Extra) > 0 {
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
			if err != nil {
				return nil, err
			}
			if raw, err = httpcall.MergeExtra(raw, extra, "type"); err != nil {
				return nil, err
			}
			parts = append(parts, raw)
		}
	}
	if role == provider.RoleTool {
		// A tool message whose parts were all tool results is done.
		if len(parts) == 0 {
			return out, nil
		}
		role = provider.RoleUser
	}
	if len(parts) == 0 && len(calls) == 0 {
		if role == provider.RoleAssistant || len(m.Content) > 0 {
			return out, nil // nothing but tool results
		}
		return append(out, wireMessage{Role: role, Content: ""}), nil
	}
	wm := wireMessage{Role: role, ToolCalls: calls}
	if same {
		wm.extra = m.Extra
	}
	switch {
	case rich:
		wm.Content = parts
	case texts == 1:
		wm.Content = text
	case texts > 1:
		if role == provider.RoleAssistant {
			// Assistant content arrays are text-only; join them.
			s := ""
			for j := range m.Content {
				if m.Content[j].Type == provider.PartText {
					s += m.Content[j].Text
				}
			}
			wm.Content = s
		} else {
			wm.Content = parts
		}
	default:
		wm.Content = nil // assistant turn with tool calls only
	}
	return append(out, wm), nil
}

// appendRequest appends w's JSON byte for byte as json.Marshal writes it,
// without reflection, for the common request: messages with string (or
// null) content and no tool calls, no tools, tool_choice or metadata. ok is
// false for any other request (and for NaN or infinite numbers), which the
// caller encodes with json.Marshal. A nil b is allocated at the estimated
// size of the request once it is known to be a plain one.
func appendRequest(b []byte, w *wireRequest) (_ []byte, ok bool) {
	if w.Metadata != nil || w.Tools != nil || w.ToolChoice != nil || w.ResponseFormat != nil || w.Seed != nil ||
		w.User != "" || w.ParallelToolCalls != nil {
		return nil, false
	}
	for i := range w.Messages {
		switch w.Messages[i].Content.(type) {
		case nil, string:
		default:
			return nil, false
		}
		if w.Messages[i].ToolCalls != nil {
			return nil, false
		}
	}
	if b == nil {
		b = make([]byte, 0, requestSize(w))
	}
	b = append(b, `{"model":`...)
	b = json.AppendEscape(b, w.Model, json.EscapeHTML)
	b = append(b, `,"messages":`...)
	if w.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range w.Messages {
			m := &w.Messages[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"role":`...)
			b = json.AppendEscape(b, m.Role, json.EscapeHTML)
			b = append(b, `,"content":`...)
			switch c := m.Content.(type) {
			case nil:
				b = append(b, "null"...)
			case string:
				b = json.AppendEscape(b, c, json.EscapeHTML)
			}
			if m.ToolCallID != "" {
				b = append(b, `,"tool_call_id":`...)
				b = json.AppendEscape(b, m.ToolCallID, json.EscapeHTML)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if w.MaxTokens != 0 {
		b = strconv.AppendInt(append(b, `,"max_tokens":`...), int64(w.MaxTokens), 10)
	}
	if w.MaxCompletionTokens != 0 {
		b = strconv.AppendInt(append(b, `,"max_completion_tokens":`...), int64(w.MaxCompletionTokens), 10)
	}
	if w.Temperature != nil {
		if b, ok = appendFloat(append(b, `,"temperature":`...), *w.Temperature); !ok {
			return nil, false
		}
	}
	if w.TopP != nil {
		if b, ok = appendFloat(append(b, `,"top_p":`...), *w.TopP); !ok {
			return nil, false
		}
	}
	if len(w.Stop) > 0 {
		b = append(b, `,"stop":[`...)
		for i, s := range w.Stop {
			if i > 0 {
				b = append(b, ',')
			}
			b = json.AppendEscape(b, s, json.EscapeHTML)
		}
		b = append(b, ']')
	}
	if w.Stream {
		b = append(b, `,"stream":true`...)
	}
	if w.StreamOptions != nil {
		b = append(b, `,"stream_options":{"include_usage":`...)
		b = strconv.AppendBool(b, w.StreamOptions.IncludeUsage)
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// appendTextPart appends the text part {"type":"text","text":...} as
// json.Marshal writes a wirePart (text omitted when empty).
func appendTextPart(b []byte, text string) []byte {
	if text == "" {
		return append(b, `{"type":"text"}`...)
	}
	b = append(b, `{"type":"text","text":`...)
	return append(json.AppendEscape(b, text, json.EscapeHTML), '}')
}

// appendFloat appends f as encoding/json writes a float64 (ok is false for
// NaN and infinities, which it rejects).
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-09 is written e-9
		b = b[:n-1]
	}
	return b, true
}

// requestSize estimates the encoded size of w, to allocate the body once.
func requestSize(w *wireRequest) int {
	n := 160 + len(w.Model)
	for i := range w.Messages {
		n += 32 + len(w.Messages[i].Role) + len(w.Messages[i].ToolCallID)
		if s, ok := w.Messages[i].Content.(string); ok {
			n += len(s) + len(s)/16
		}
	}
	for _, s := range w.Stop {
		n += len(s) + 3
	}
	return n
}
