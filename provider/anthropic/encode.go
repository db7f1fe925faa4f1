package anthropic

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// Dialect is the value of provider.Request.Dialect for requests that arrived
// in the Anthropic Messages format; their Extra fields are sent unchanged.
const Dialect = "anthropic"

type wireRequest struct {
	Model         string          `json:"model"`
	MaxTokens     int             `json:"max_tokens"`
	System        string          `json:"system,omitempty"`
	Messages      []wireMessage   `json:"messages"`
	Temperature   *float64        `json:"temperature,omitempty"`
	TopP          *float64        `json:"top_p,omitempty"`
	StopSequences []string        `json:"stop_sequences,omitempty"`
	Metadata      *wireMetadata   `json:"metadata,omitempty"`
	Tools         []wireTool      `json:"tools,omitempty"`
	ToolChoice    *wireToolChoice `json:"tool_choice,omitempty"`
	Stream        bool            `json:"stream,omitempty"`
	TopK          *int            `json:"top_k,omitempty"`
	OutputConfig  *wireOutput     `json:"output_config,omitempty"`
}

type wireOutput struct {
	Format struct {
		Type   string          `json:"type"`
		Schema json.RawMessage `json:"schema"`
	} `json:"format"`
}

type wireMetadata struct {
	UserID string `json:"user_id,omitempty"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type wireToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

type wireMessage struct {
	Role    string                     `json:"role"`
	Content []json.RawMessage          `json:"content"`
	extra   map[string]json.RawMessage // the message's Extra, same dialect only
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Source    *wireSource     `json:"source,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type wireSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

var emptyObject = json.RawMessage("{}")

// Encode returns the Messages API body for req, addressed to model. A
// request that arrived in this dialect with its body (req.Passthrough) is that
// body with model, stream and a default max_tokens set, byte for byte
// otherwise. Else the canonical fields are encoded: tool results (RoleTool
// messages, or tool_result parts anywhere) become tool_result blocks in a
// user turn, consecutive turns of the same role are merged, and MaxTokens
// defaults to DefaultMaxTokens. When req.Dialect is Dialect, req.Extra and
// each message's and part's Extra are sent unchanged (an Extra key replaces
// the canonical encoding of the same key, except model and stream), system
// messages stay in place and parts or roles the canonical form does not
// hold go out verbatim; from another dialect system messages join the
// system prompt, such parts and roles are left out, a temperature above 1
// is clamped to 1 and top_p is dropped when temperature is set.
func Encode(req *provider.Request, model string, stream bool) ([]byte, error) {
	body, _, err := encode(req, model, stream)
	return body, err
}

// encode is Encode that also names the fields it could not send.
func encode(req *provider.Request, model string, stream bool) ([]byte, []string, error) {
	same := req.Dialect == Dialect
	if relayed(req) {
		parts, err := splice(req.Passthrough, model, stream)
		return bytes.Join(parts, nil), nil, err
	}
	req, err := req.Full()
	if err != nil {
		return nil, nil, err
	}
	var drops httpcall.Drops
	w := wireRequest{Model: model, MaxTokens: req.MaxTokens, System: req.System,
		Temperature: req.Temperature, TopP: req.TopP, StopSequences: req.Stop, Stream: stream}
	if w.MaxTokens <= 0 {
		w.MaxTokens = DefaultMaxTokens
	}
	w.options(req, &drops)
	if err := w.tools(req); err != nil {
		return nil, nil, err
	}
	for i := range req.Messages {
		if err := w.addMessage(&req.Messages[i], same, &drops); err != nil {
			return nil, nil, fmt.Errorf("message %d: %w", i, err)
		}
	}
	if w.Messages == nil {
		w.Messages = []wireMessage{}
	}
	body, err := httpcall.Marshal(&w, req)
	if err != nil {
		return nil, nil, err
	}
	if same {
		extras := make([]map[string]json.RawMessage, len(w.Messages))
		for i := range w.Messages {
			extras[i] = w.Messages[i].extra
		}
		if body, err = httpcall.MessageExtras(body, extras); err == nil {
			body, err = httpcall.MergeExtra(body, req.Extra, "model", "stream")
		}
	}
	return body, drops.Names(), err
}

// options sets sampling, metadata and the output format, naming in drops
// what the API cannot take.
func (w *wireRequest) options(req *provider.Request, drops *httpcall.Drops) {
	same := req.Dialect == Dialect
	if !same {
		// Requests from other dialects: Anthropic's temperature range is
		// 0..1 (OpenAI's and Gemini's is 0..2), and recent models reject
		// temperature and top_p together, which OpenAI clients often send.
		if t := w.Temperature; t != nil && *t > 1 {
			one := 1.0
			w.Temperature = &one
		}
		if w.Temperature != nil && w.TopP != nil {
			w.TopP = nil
			drops.Add("top_p")
		}
		drops.Request(req)
	}
	for k := range req.Metadata {
		if k != "user_id" && !same {
			drops.Add("metadata." + k)
		}
	}
	if uid := req.Metadata["user_id"]; uid != "" {
		w.Metadata = &wireMetadata{UserID: uid}
	} else if req.User != "" {
		w.Metadata = &wireMetadata{UserID: req.User}
	}
	w.TopK = req.TopK
	if req.Seed != nil {
		drops.Add(httpcall.FieldName(req.Dialect, "seed"))
	}
	if rf := req.ResponseFormat; rf != nil {
		if rf.Type == "json_schema" && len(rf.Schema) > 0 {
			w.OutputConfig = &wireOutput{}
			w.OutputConfig.Format.Type, w.OutputConfig.Format.Schema = "json_schema", rf.Schema
		} else {
			drops.Add(httpcall.FieldName(req.Dialect, "response_format") + "(" + rf.Type + ")") // no schema-less JSON mode
		}
	}
}

// tools sets the tools, tool_choice and its disable_parallel_tool_use.
func (w *wireRequest) tools(req *provider.Request) error {
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if tc := req.ToolChoice; tc != nil {
		switch tc.Mode {
		case "auto", "":
			w.ToolChoice = &wireToolChoice{Type: "auto"}
		case "none":
			w.ToolChoice = &wireToolChoice{Type: "none"}
		case "required":
			w.ToolChoice = &wireToolChoice{Type: "any"}
		case "tool":
			w.ToolChoice = &wireToolChoice{Type: "tool", Name: tc.Name}
		default:
			return fmt.Errorf("unknown tool_choice mode %q", tc.Mode)
		}
	}
	if p := req.ParallelToolCalls; p != nil && !*p && len(w.Tools) > 0 {
		if w.ToolChoice == nil {
			w.ToolChoice = &wireToolChoice{Type: "auto"}
		}
		if w.ToolChoice.Type != "none" {
			w.ToolChoice.DisableParallelToolUse = true
		}
	}
	return nil
}

// relayed reports whether req carries its client's Messages API body.
func relayed(req *provider.Request) bool {
	return req.Passthrough != nil && req.Passthrough.Dialect == Dialect && req.Dialect == Dialect
}

// splice is the client's own body with the fields the adapter controls
// set, as the parts to send in turn: slices of the client's buffer around
// the fields set (rawjson.SpliceParts).
func splice(pt *provider.Passthrough, model string, stream bool) ([][]byte, error) {
	ms := pt.Fields
	if ms == nil {
		var err error
		if ms, err = rawjson.Members(pt.Body, nil); err != nil {
			return nil, err
		}
	}
	mode := rawjson.Set
	if !stream {
		mode = rawjson.Replace // absent means false
	}
	m := json.AppendEscape(make([]byte, 0, len(model)+2), model, 0)
	return rawjson.SpliceParts(pt.Body, ms, []rawjson.Field{
		{Key: "model", Value: m},
		{Key: "stream", Value: strconv.AppendBool(nil, stream), Mode: mode},
		{Key: "max_tokens", Value: strconv.AppendInt(nil, DefaultMaxTokens, 10), Mode: rawjson.Default},
	}), nil
}

// addMessage appends the blocks of m to w: a system message joins the
// system prompt (from another dialect) or stays in place, a turn of the
// same role as the one before joins it.
func (w *wireRequest) addMessage(m *provider.Message, same bool, drops *httpcall.Drops) error {
	role := m.Role
	switch role {
	case provider.RoleTool:
		role = provider.RoleUser
	case provider.RoleUser, provider.RoleAssistant:
	case provider.RoleSystem:
		if !same {
			w.System = provider.JoinText(w.System, m.Content)
			drops.Extra("messages[].", m.Extra)
			return nil
		}
	default:
		if !same {
			drops.Add("messages[role=" + role + "]")
			return nil
		}
	}
	blocks := make([]json.RawMessage, 0, len(m.Content))
	for j := range m.Content {
		p := &m.Content[j]
		var b json.RawMessage
		var err error
		switch {
		case httpcall.KnownPart(p):
			b, err = encodePart(p, same)
			if !same {
				drops.Extra("messages[].content[].", p.Extra)
			}
		case same:
			b, err = httpcall.RawPart(p)
		default:
			drops.Add("messages[].content[type=" + p.Type + "]")
			continue // another dialect's block (thinking, document...)
		}
		if err != nil {
			return fmt.Errorf("part %d: %w", j, err)
		}
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 && len(m.Content) > 0 {
		return nil // every part was another dialect's
	}
	extra := m.Extra
	if !same {
		drops.Extra("messages[].", extra)
		extra = nil
	}
	if n := len(w.Messages); n > 0 && w.Messages[n-1].Role == role && role != provider.RoleSystem && len(extra) == 0 {
		w.Messages[n-1].Content = append(w.Messages[n-1].Content, blocks...)
		return nil
	}
	w.Messages = append(w.Messages, wireMessage{Role: role, Content: blocks, extra: extra})
	return nil
}

func encodePart(p *provider.Part, same bool) (json.RawMessage, error) {
	var b wireBlock
	switch p.Type {
	case provider.PartText:
		b = wireBlock{Type: "text", Text: p.Text}
	case provider.PartImage:
		if p.Image == nil {
			return nil, fmt.Errorf("image part without image")
		}
		if p.Image.Data != "" {
			b = wireBlock{Type: "image", Source: &wireSource{Type: "base64", MediaType: p.Image.MediaType, Data: p.Image.Data}}
		} else {
			b = wireBlock{Type: "image", Source: &wireSource{Type: "url", URL: p.Image.URL}}
		}
	case provider.PartToolCall:
		tc := p.ToolCall
		if tc == nil {
			return nil, fmt.Errorf("tool_call part without tool call")
		}
		args := tc.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = emptyObject
		}
		b = wireBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: args}
	case provider.PartToolResult:
		tr := p.ToolResult
		if tr == nil {
			return nil, fmt.Errorf("tool_result part without result")
		}
		content := tr.Content
		b = wireBlock{Type: "tool_result", ToolUseID: tr.CallID, Content: &content, IsError: tr.IsError}
	default:
		return nil, fmt.Errorf("unsupported part type %q", p.Type)
	}
	raw, err := json.Marshal(&b)
	if err != nil {
		return nil, err
	}
	if same && len(p.Extra) > 0 {
		return httpcall.MergeExtra(raw, p.Extra, "type")
	}
	return raw, nil
}
