package gateway

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// Dialect names, as in provider.Request.Dialect.
const (
	DialectOpenAI    = "openai"
	DialectAnthropic = "anthropic"
)

// inbound is a decoded client request: the canonical request plus what only
// the gateway uses (the requested model, per-request fallbacks, stream options).
type inbound struct {
	dialect      string
	model        string
	req          *provider.Request
	fallbacks    []string
	includeUsage bool // OpenAI stream_options.include_usage
	// messages: a request decoded for relay (see decodeChat) has a
	// non-empty array of messages, not decoded.
	messages bool
	// known, when set, are the body's top-level fields, as a relay
	// decoding found them: decodeRequest reads them without a walk.
	known []rawjson.Member
	// lean: message texts may be left undecoded in Part.Raw, for a
	// deferred decoding (see provider.Request.Lean).
	lean bool
}

// requestError is a client-side fault found while decoding (status 400).
type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return &requestError{msg: fmt.Sprintf(format, a...)}
}

// ---- OpenAI request decoding ----

type oaMessage struct {
	Role       string
	Content    json.RawMessage
	ToolCalls  []oaToolCall
	ToolCallID string
	Name       string
	Extra      map[string]json.RawMessage // fields the canonical form lacks
}

type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// decodeOpenAI decodes an OpenAI chat-completions request body. Top-level
// fields the canonical request lacks are kept in Request.Extra; part fields in
// Part.Extra; gateway-only fields (fallbacks, models) are removed. Nothing
// decoded points into body.
func decodeOpenAI(body []byte) (*inbound, error) { return openAIRequest(bytes.Clone(body)) }

// openAIRequest is decodeOpenAI of a body the request keeps.
func openAIRequest(body []byte) (*inbound, error) { return decodeWhole(DialectOpenAI, body) }

// openAIDecode decodes an OpenAI body into in whole, or with relay only
// what decodeChat reads.
func openAIDecode(body []byte, in *inbound, relay bool) error {
	return decodeDialect(body, in, relay, DialectOpenAI, openAILater, openAIField)
}

// openAILater are the fields a relay decoding leaves for later (see
// deferField).
var openAILater = []string{"stop", "tools", "tool_choice", "response_format", "seed", "user", "parallel_tool_calls"}

// openAIField decodes the OpenAI field k into in; known is false for a
// field decodeRequest decodes, or keeps in Extra.
func openAIField(in *inbound, k string, v json.RawMessage) (known bool, err error) {
	r := in.req
	known = true
	switch k {
	case "messages":
		err = decodeOAMessages(v, r)
	case "max_tokens", "max_completion_tokens":
		var n int
		if err = unmarshalInt(v, &n); err == nil && (k == "max_tokens" || r.MaxTokens == 0) {
			r.MaxTokens = n
		}
	case "stop":
		r.Stop, err = stringOrList(v)
	case "stream_options":
		var so struct {
			IncludeUsage bool `json:"include_usage"`
		}
		err = rawjson.Unmarshal(v, &so)
		in.includeUsage = so.IncludeUsage
	case "metadata":
		err = rawjson.Unmarshal(v, &r.Metadata)
	case "tools":
		err = decodeOATools(v, r)
	case "tool_choice":
		err = decodeOAToolChoice(v, r)
	case "response_format":
		err = decodeOAResponseFormat(v, r)
	case "seed":
		err = unmarshalOpt(v, &r.Seed, unmarshalInt)
	case "user":
		r.User, err = rawjson.String(v)
		if err != nil {
			err = typeError("", "a string", v)
		}
	case "parallel_tool_calls":
		err = unmarshalOpt(v, &r.ParallelToolCalls, unmarshalBool)
	default:
		known = false
	}
	return known, err
}

// setExtra stores v, which points into the request's body (the decoders
// own it: see readBody, Codec.DecodeChat).
func setExtra(m *map[string]json.RawMessage, k string, v json.RawMessage) {
	if *m == nil {
		*m = make(map[string]json.RawMessage)
	}
	(*m)[k] = v
}

// stringOrList decodes a JSON string, array of strings or null.
func stringOrList(v json.RawMessage) ([]string, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil, nil
	}
	if v[0] == '"' {
		s, err := rawjson.String(v)
		return []string{s}, err
	}
	if v[0] != '[' {
		return nil, typeError("", "a string or an array of strings", v)
	}
	var l []string
	err := rawjson.EachElement(v, func(el []byte) error {
		s, err := rawjson.String(el)
		if err != nil || rawjson.IsNull(el) {
			return typeError(fmt.Sprintf("[%d]", len(l)), "a string", el)
		}
		l = append(l, s)
		return nil
	})
	return l, err
}

// oaMessageField reads field k of the message at index i into m.
func oaMessageField(m *oaMessage, i int, k string, fv []byte) error {
	at := "[" + strconv.Itoa(i) + "]"
	var err error
	switch k {
	case "role":
		if m.Role, err = rawjson.String(fv); err != nil {
			return typeError(at+".role", "a string", fv)
		}
	case "content":
		m.Content = fv
	case "tool_calls":
		if err = rawjson.Unmarshal(fv, &m.ToolCalls); err != nil {
			return prefixError(at+".tool_calls", err)
		}
	case "tool_call_id":
		if m.ToolCallID, err = rawjson.String(fv); err != nil {
			return typeError(at+".tool_call_id", "a string", fv)
		}
	case "name":
		if m.Name, err = rawjson.String(fv); err != nil {
			return typeError(at+".name", "a string", fv)
		}
		setExtra(&m.Extra, k, fv)
	default:
		if !rawjson.Valid(fv) {
			return errSyntax
		}
		setExtra(&m.Extra, k, fv)
	}
	return nil
}

func decodeOAMessages(v json.RawMessage, r *provider.Request) error {
	if !isArray(v) {
		return typeError("", "an array of messages", v)
	}
	msgs, err := messageArray(v, oaMessageField)
	if err != nil {
		return err
	}
	r.Messages = make([]provider.Message, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		parts, err := decodeOAContent(m.Content)
		if err != nil {
			return prefixError(fmt.Sprintf("[%d].content", i), err)
		}
		switch m.Role {
		case "system", "developer":
			r.System = provider.JoinText(r.System, parts)
		case "user", "assistant":
			for _, tc := range m.ToolCalls {
				args := json.RawMessage(tc.Function.Arguments)
				if !rawjson.Valid(args) {
					args = json.RawMessage(`{}`)
				}
				parts = append(parts, provider.Part{Type: provider.PartToolCall,
					ToolCall: &provider.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args}})
			}
			r.Messages = append(r.Messages, provider.Message{Role: m.Role, Content: parts, Extra: m.Extra})
		case "tool", "function":
			p := provider.Part{Type: provider.PartToolResult,
				ToolResult: &provider.ToolResult{CallID: m.ToolCallID, Name: m.Name, Content: partsText(parts)}}
			if p.ToolResult.CallID == "" {
				p.ToolResult.CallID = m.Name // legacy function role
			}
			// Consecutive tool results form one turn (parallel tool calls).
			if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == provider.RoleTool {
				r.Messages[n-1].Content = append(r.Messages[n-1].Content, p)
			} else {
				r.Messages = append(r.Messages, provider.Message{Role: provider.RoleTool, Content: []provider.Part{p}})
			}
		default:
			// An unknown role: kept for a target of this dialect to judge.
			r.Messages = append(r.Messages, provider.Message{Role: m.Role, Content: parts, Extra: m.Extra})
		}
	}
	return nil
}

// partsText concatenates the text parts of parts.
func partsText(parts []provider.Part) string {
	if len(parts) == 1 && parts[0].Type == provider.PartText {
		return parts[0].Text
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == provider.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// decodeOAContent decodes message content: a string, null, or an array of parts.
func decodeOAContent(v json.RawMessage) ([]provider.Part, error) {
	return decodeContent(v, false, func(typ string, obj map[string]json.RawMessage, p *provider.Part) error {
		switch typ {
		case "text":
			var err error
			if p.Text, err = rawjson.String(obj["text"]); err != nil {
				return typeError("text", "a string", obj["text"])
			}
			delete(obj, "text")
		case "image_url":
			var iu struct {
				URL    string          `json:"url"`
				Detail json.RawMessage `json:"detail"`
			}
			if err := rawjson.Unmarshal(obj["image_url"], &iu); err != nil {
				return prefixError("image_url", err)
			}
			delete(obj, "image_url")
			p.Type = provider.PartImage
			p.Image = imageFromURL(iu.URL)
			if len(iu.Detail) > 0 {
				obj["detail"] = iu.Detail
			}
		}
		return nil
	})
}

// imageFromURL splits a data: URL into media type and base64 data.
func imageFromURL(u string) *provider.Image {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		if meta, data, ok := strings.Cut(rest, ","); ok {
			if mt, ok := strings.CutSuffix(meta, ";base64"); ok {
				return &provider.Image{MediaType: mt, Data: data}
			}
		}
	}
	return &provider.Image{URL: u}
}

func decodeOATools(v json.RawMessage, r *provider.Request) error {
	var tools []oaTool
	if err := rawjson.Unmarshal(v, &tools); err != nil {
		return err
	}
	lossy := lossyNames{r: r}
	for _, t := range tools {
		if t.Type != "function" {
			lossy.add("tools[type=" + t.Type + "]")
			continue
		}
		r.Tools = append(r.Tools, provider.Tool{Name: t.Function.Name,
			Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	// Anything beyond name/description/parameters (strict, non-function
	// tools) survives in Extra for a same-dialect target.
	if bytes.Contains(v, []byte(`"strict"`)) {
		lossy.add("tools[].function.strict")
	}
	if lossy.any {
		setExtra(&r.Extra, "tools", v)
	}
	return nil
}

func decodeOAToolChoice(v json.RawMessage, r *provider.Request) error {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	if v[0] == '"' {
		s, err := rawjson.String(v)
		if err != nil {
			return err
		}
		r.ToolChoice = &provider.ToolChoice{Mode: s}
		return nil
	}
	var tc struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := rawjson.Unmarshal(v, &tc); err != nil {
		return err
	}
	if tc.Type != "function" {
		// allowed_tools, custom...: this dialect's targets judge it.
		(&lossyNames{r: r}).add("tool_choice")
		setExtra(&r.Extra, "tool_choice", v)
		return nil
	}
	r.ToolChoice = &provider.ToolChoice{Mode: "tool", Name: tc.Function.Name}
	return nil
}

// decodeOAResponseFormat decodes response_format: text (the default),
// json_object or json_schema.
func decodeOAResponseFormat(v json.RawMessage, r *provider.Request) error {
	if rawjson.IsNull(v) {
		return nil
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Strict      *bool           `json:"strict"`
			Schema      json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if err := rawjson.Unmarshal(v, &rf); err != nil {
		return err
	}
	switch rf.Type {
	case "text":
	case "json_object":
		r.ResponseFormat = &provider.ResponseFormat{Type: rf.Type}
	case "json_schema":
		js := rf.JSONSchema
		r.ResponseFormat = &provider.ResponseFormat{Type: rf.Type, Name: js.Name, Description: js.Description,
			Strict: js.Strict, Schema: bytes.Clone(js.Schema)}
	default:
		(&lossyNames{r: r}).add("response_format")
		setExtra(&r.Extra, "response_format", v)
	}
	return nil
}

// ---- OpenAI response encoding ----

func oaFinish(f string) string {
	switch f {
	case provider.FinishStop, provider.FinishLength, provider.FinishToolCalls, provider.FinishFiltered:
		return f
	case "":
		return provider.FinishStop
	}
	return f
}

// oaServiceTier is a service tier in OpenAI's words (Anthropic's
// "standard" is OpenAI's "default").
func oaServiceTier(t string) string {
	if t == "standard" {
		return "default"
	}
	return t
}
