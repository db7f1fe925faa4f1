package gemini

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// Dialect is the value of provider.Request.Dialect for requests that arrived
// in the Gemini format; their Extra fields (safetySettings, cachedContent,
// ...) are sent unchanged.
const Dialect = "gemini"

type wireRequest struct {
	Contents          []wireContent `json:"contents"`
	SystemInstruction *wireContent  `json:"systemInstruction,omitempty"`
	GenerationConfig  *wireGenCfg   `json:"generationConfig,omitempty"`
	Tools             []wireTools   `json:"tools,omitempty"`
	ToolConfig        *wireToolCfg  `json:"toolConfig,omitempty"`
}

type wireContent struct {
	Role  string     `json:"role,omitempty"`
	Parts []wirePart `json:"parts"`
}

type wirePart struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	InlineData       *wireBlob         `json:"inlineData,omitempty"`
	FileData         *wireFile         `json:"fileData,omitempty"`
	FunctionCall     *wireFunctionCall `json:"functionCall,omitempty"`
	FunctionResponse *wireFunctionResp `json:"functionResponse,omitempty"`
	extra            map[string]json.RawMessage
}

type wireBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type wireFile struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

type wireFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type wireFunctionResp struct {
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type wireGenCfg struct {
	MaxOutputTokens    int             `json:"maxOutputTokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	TopK               *int            `json:"topK,omitempty"`
	Seed               *int            `json:"seed,omitempty"`
	StopSequences      []string        `json:"stopSequences,omitempty"`
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
}

type wireTools struct {
	FunctionDeclarations []wireDecl `json:"functionDeclarations"`
}

type wireDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type wireToolCfg struct {
	FunctionCallingConfig struct {
		Mode                 string   `json:"mode"`
		AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
	} `json:"functionCallingConfig"`
}

// Encode returns the generateContent body for req. The system prompt goes in
// systemInstruction, assistant turns have role "model", tool calls become
// functionCall parts and tool results functionResponse parts in a user turn
// (named after the call they answer when ToolResult.Name is empty; a result
// that is not a JSON object is wrapped as {"result": ...} or {"error": ...}),
// tool schemas are sent as parametersJsonSchema, and consecutive turns of
// one role are merged. When req.Dialect is Dialect, req.Extra and each
// part's Extra are sent unchanged.
//
// A tool call goes back with the thoughtSignature Gemini gave it (kept in
// ToolCall.Extra). For Gemini 3 and later models (model "gemini-3..."),
// which reject a replayed call without one, a call that has none (it came
// from another provider, or its signature was lost) gets Google's
// documented sentinel SkipSignature.
func Encode(req *provider.Request, model string) ([]byte, error) {
	body, _, err := encode(req, model)
	return body, err
}

// encode is Encode that also names the fields it could not send.
func encode(req *provider.Request, model string) ([]byte, []string, error) {
	req, err := req.Full()
	if err != nil {
		return nil, nil, err
	}
	same := req.Dialect == Dialect
	var drops httpcall.Drops
	if !same {
		drops.Request(req)
		for k := range req.Metadata {
			drops.Add("metadata." + k)
		}
	}
	w := wireRequest{Contents: make([]wireContent, 0, len(req.Messages))}
	if system := systemOf(req, &drops); system != "" {
		w.SystemInstruction = &wireContent{Parts: []wirePart{{Text: system}}}
	}
	w.GenerationConfig = genConfig(req)
	if req.User != "" && !same {
		drops.Add(httpcall.FieldName(req.Dialect, "user"))
	}
	if req.ParallelToolCalls != nil && !same {
		drops.Add(httpcall.FieldName(req.Dialect, "parallel_tool_calls"))
	}
	if len(req.Tools) > 0 {
		decls := make([]wireDecl, len(req.Tools))
		for i, t := range req.Tools {
			decls[i] = wireDecl{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
		}
		w.Tools = []wireTools{{FunctionDeclarations: decls}}
	}
	if w.ToolConfig, err = toolConfig(req.ToolChoice); err != nil {
		return nil, nil, err
	}
	c := contents{same: same, needSig: needsSignature(model), drops: &drops, names: map[string]string{}}
	for i := range req.Messages {
		if err := c.add(&w, i, &req.Messages[i]); err != nil {
			return nil, nil, err
		}
	}
	body, err := json.Marshal(&w)
	if err != nil {
		return nil, nil, err
	}
	if same {
		body, err = httpcall.MergeExtra(body, req.Extra)
	}
	return body, drops.Names(), err
}

// systemOf is the one system instruction Gemini takes: the request's
// system prompt and the text of its system messages.
func systemOf(req *provider.Request, drops *httpcall.Drops) string {
	system := req.System
	for i := range req.Messages {
		if m := &req.Messages[i]; m.Role == provider.RoleSystem {
			system = provider.JoinText(system, m.Content)
			if req.Dialect != Dialect {
				drops.Extra("messages[].", m.Extra)
			}
		}
	}
	return system
}

// genConfig is the request's generationConfig, or nil when it sets none.
func genConfig(req *provider.Request) *wireGenCfg {
	g := wireGenCfg{MaxOutputTokens: req.MaxTokens, Temperature: req.Temperature,
		TopP: req.TopP, TopK: req.TopK, Seed: req.Seed, StopSequences: req.Stop}
	if rf := req.ResponseFormat; rf != nil {
		g.ResponseMimeType, g.ResponseJSONSchema = "application/json", rf.Schema
	}
	if g.MaxOutputTokens > 0 || g.Temperature != nil || g.TopP != nil || g.TopK != nil || g.Seed != nil ||
		len(g.StopSequences) > 0 || g.ResponseMimeType != "" {
		return &g
	}
	return nil
}

func toolConfig(tc *provider.ToolChoice) (*wireToolCfg, error) {
	if tc == nil {
		return nil, nil
	}
	cfg := &wireToolCfg{}
	switch tc.Mode {
	case "auto", "":
		cfg.FunctionCallingConfig.Mode = "AUTO"
	case "none":
		cfg.FunctionCallingConfig.Mode = "NONE"
	case "required":
		cfg.FunctionCallingConfig.Mode = "ANY"
	case "tool":
		cfg.FunctionCallingConfig.Mode = "ANY"
		cfg.FunctionCallingConfig.AllowedFunctionNames = []string{tc.Name}
	default:
		return nil, fmt.Errorf("unknown tool_choice mode %q", tc.Mode)
	}
	return cfg, nil
}

// contents turns the conversation into Gemini's contents: consecutive
// messages of one role merge into one content.
type contents struct {
	same, needSig bool
	drops         *httpcall.Drops
	names         map[string]string // tool call id -> function name
}

// add appends message i, m, to w's contents.
func (c *contents) add(w *wireRequest, i int, m *provider.Message) error {
	role := "user"
	switch m.Role {
	case provider.RoleAssistant:
		role = "model"
	case provider.RoleUser, provider.RoleTool:
	case provider.RoleSystem:
		return nil // in the system instruction
	default:
		if !c.same {
			c.drops.Add("messages[role=" + m.Role + "]")
			return nil
		}
		role = m.Role
	}
	if !c.same {
		c.drops.Extra("messages[].", m.Extra)
	}
	parts := make([]wirePart, 0, len(m.Content))
	for j := range m.Content {
		part := &m.Content[j]
		var p wirePart
		switch {
		case httpcall.KnownPart(part):
			var err error
			if p, err = encodePart(part, c.names, c.needSig); err != nil {
				return fmt.Errorf("message %d part %d: %w", i, j, err)
			}
			if !c.same {
				c.drops.Extra("messages[].content[].", part.Extra)
			}
		case !c.same:
			c.drops.Add("messages[].content[type=" + part.Type + "]")
			continue // another dialect's part (thinking, document...)
		}
		if c.same {
			// A part the canonical form does not hold (executableCode,
			// videoMetadata...) is its Extra fields alone.
			p.extra = part.Extra
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 && len(m.Content) > 0 {
		return nil // every part was another dialect's
	}
	if n := len(w.Contents); n > 0 && w.Contents[n-1].Role == role {
		w.Contents[n-1].Parts = append(w.Contents[n-1].Parts, parts...)
		return nil
	}
	w.Contents = append(w.Contents, wireContent{Role: role, Parts: parts})
	return nil
}

// MarshalJSON adds a part's dialect Extra fields.
func (p wirePart) MarshalJSON() ([]byte, error) {
	type plain wirePart
	b, err := json.Marshal(plain(p))
	if err != nil || len(p.extra) == 0 {
		return b, err
	}
	return httpcall.MergeExtra(b, p.extra)
}

// SkipSignature is the thoughtSignature Google documents for function calls
// whose real signature is unknown.
const SkipSignature = "skip_thought_signature_validator"

// needsSignature reports whether model is Gemini 3 or later.
func needsSignature(model string) bool {
	v, ok := strings.CutPrefix(strings.TrimPrefix(model, "models/"), "gemini-")
	if !ok {
		return false
	}
	n := 0
	for i := 0; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		n = n*10 + int(v[i]-'0')
	}
	return n >= 3
}

func signature(tc *provider.ToolCall) string {
	var s string
	if raw, ok := tc.Extra["thoughtSignature"]; ok && rawjson.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

func encodePart(p *provider.Part, names map[string]string, needSig bool) (wirePart, error) {
	switch p.Type {
	case provider.PartText:
		return wirePart{Text: p.Text}, nil
	case provider.PartImage:
		if p.Image == nil {
			return wirePart{}, fmt.Errorf("image part without image")
		}
		if p.Image.Data != "" {
			return wirePart{InlineData: &wireBlob{MimeType: p.Image.MediaType, Data: p.Image.Data}}, nil
		}
		return wirePart{FileData: &wireFile{MimeType: p.Image.MediaType, FileURI: p.Image.URL}}, nil
	case provider.PartToolCall:
		tc := p.ToolCall
		if tc == nil {
			return wirePart{}, fmt.Errorf("tool_call part without tool call")
		}
		names[tc.ID] = tc.Name
		args := tc.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		sig := signature(tc)
		if sig == "" && needSig {
			sig = SkipSignature
		}
		return wirePart{FunctionCall: &wireFunctionCall{Name: tc.Name, Args: args}, ThoughtSignature: sig}, nil
	case provider.PartToolResult:
		tr := p.ToolResult
		if tr == nil {
			return wirePart{}, fmt.Errorf("tool_result part without result")
		}
		name := tr.Name
		if name == "" {
			name = names[tr.CallID]
		}
		if name == "" {
			return wirePart{}, fmt.Errorf("tool result %q answers no earlier tool call and has no name", tr.CallID)
		}
		return wirePart{FunctionResponse: &wireFunctionResp{Name: name, Response: resultObject(tr)}}, nil
	}
	return wirePart{}, fmt.Errorf("unsupported part type %q", p.Type)
}

// resultObject makes a tool result a JSON object, as functionResponse.response must be.
func resultObject(tr *provider.ToolResult) json.RawMessage {
	c := bytes.TrimSpace([]byte(tr.Content))
	if !tr.IsError && len(c) > 0 && c[0] == '{' && json.Valid(c) {
		return json.RawMessage(c)
	}
	key := "result"
	if tr.IsError {
		key = "error"
	}
	b, _ := json.Marshal(map[string]string{key: tr.Content})
	return b
}
