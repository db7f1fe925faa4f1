package mock

import (
	"strings"

	"github.com/segmentio/encoding/json"
)

// chat is what the mock needs from a generation request, whatever its dialect.
type chat struct {
	model        string
	stream       bool
	includeUsage bool   // OpenAI stream_options.include_usage
	text         string // text of the last user message
	toolResult   bool   // the last message carries a tool result (text is its content)
	tools        []tool
	force        string // tool forced by tool_choice ("" if none)
	noTools      bool   // tool_choice forbids tools
	inputTokens  int
}

type tool struct {
	name   string
	params json.RawMessage // JSON Schema
}

// textOf returns the text in an Anthropic or OpenAI content value: a
// string, or an array of blocks with "text" (and Anthropic tool_result
// blocks, whose content is itself a string or blocks).
func textOf(raw json.RawMessage) (text string, isToolResult bool) {
	if len(raw) == 0 {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s, false
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return "", false
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text", "input_text", "":
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		case "tool_result":
			t, _ := textOf(b.Content)
			parts = append(parts, t)
			isToolResult = true
		}
	}
	return strings.Join(parts, " "), isToolResult
}

// decodeBody is json.Unmarshal(body, v) for a request body the reply
// owns: strings and raw values without escapes point into body instead of
// being copied.
func decodeBody(body []byte, v any) error {
	rest, err := json.Parse(body, v, json.ZeroCopy)
	if err == nil && len(rest) > 0 {
		return json.Unmarshal(body, v) // the trailing-data error, as Unmarshal reports it
	}
	return err
}

func estimateTokens(body []byte) int { return len(body)/4 + 1 }

// parseAnthropic reads a Messages API request.
func parseAnthropic(body []byte) (*chat, error) {
	var r struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		ToolChoice *struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tool_choice"`
	}
	if err := decodeBody(body, &r); err != nil {
		return nil, err
	}
	c := &chat{model: r.Model, stream: r.Stream, inputTokens: estimateTokens(body)}
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			c.text, c.toolResult = textOf(r.Messages[i].Content)
			break
		}
	}
	for _, t := range r.Tools {
		c.tools = append(c.tools, tool{name: t.Name, params: t.InputSchema})
	}
	if tc := r.ToolChoice; tc != nil {
		switch tc.Type {
		case "tool":
			c.force = tc.Name
		case "any":
			c.force = "*"
		case "none":
			c.noTools = true
		}
	}
	return c, nil
}

// parseOpenAI reads a Chat Completions request.
func parseOpenAI(body []byte) (*chat, error) {
	var r struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		ToolChoice json.RawMessage `json:"tool_choice"`
	}
	if err := decodeBody(body, &r); err != nil {
		return nil, err
	}
	c := &chat{model: r.Model, stream: r.Stream, inputTokens: estimateTokens(body)}
	c.includeUsage = r.StreamOptions != nil && r.StreamOptions.IncludeUsage
	if n := len(r.Messages); n > 0 {
		last := r.Messages[n-1]
		if last.Role == "tool" || last.Role == "function" {
			c.text, _ = textOf(last.Content)
			c.toolResult = true
		} else {
			for i := n - 1; i >= 0; i-- {
				if r.Messages[i].Role == "user" {
					c.text, _ = textOf(r.Messages[i].Content)
					break
				}
			}
		}
	}
	for _, t := range r.Tools {
		c.tools = append(c.tools, tool{name: t.Function.Name, params: t.Function.Parameters})
	}
	if len(r.ToolChoice) > 0 {
		if r.ToolChoice[0] == '"' {
			var s string
			_ = json.Unmarshal(r.ToolChoice, &s)
			switch s {
			case "required":
				c.force = "*"
			case "none":
				c.noTools = true
			}
		} else {
			var o struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			}
			if json.Unmarshal(r.ToolChoice, &o) == nil && o.Function.Name != "" {
				c.force = o.Function.Name
			}
		}
	}
	return c, nil
}

type geminiDecl struct {
	Name       string          `json:"name"`
	Parameters json.RawMessage `json:"parameters"`
	// JSONSchema is the schema as JSON Schema (parametersJsonSchema),
	// which the API takes instead of its OpenAPI subset.
	JSONSchema json.RawMessage `json:"parametersJsonSchema"`
}

// parseGemini reads a generateContent request (camelCase or snake_case).
func parseGemini(body []byte, model string, stream bool) (*chat, error) {
	var r struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text              string          `json:"text"`
				FunctionResponse  json.RawMessage `json:"functionResponse"`
				FunctionResponse2 json.RawMessage `json:"function_response"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations  []geminiDecl `json:"functionDeclarations"`
			FunctionDeclarations2 []geminiDecl `json:"function_declarations"`
		} `json:"tools"`
		ToolConfig  *geminiToolConfig `json:"toolConfig"`
		ToolConfig2 *geminiToolConfig `json:"tool_config"`
	}
	if err := decodeBody(body, &r); err != nil {
		return nil, err
	}
	c := &chat{model: model, stream: stream, inputTokens: estimateTokens(body)}
	if n := len(r.Contents); n > 0 {
		last := r.Contents[n-1]
		var texts []string
		for _, p := range last.Parts {
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
			if fr := p.FunctionResponse; len(fr) > 0 || len(p.FunctionResponse2) > 0 {
				if len(fr) == 0 {
					fr = p.FunctionResponse2
				}
				c.toolResult = true
				texts = append(texts, geminiResponseText(fr))
			}
		}
		c.text = strings.Join(texts, " ")
	}
	for _, t := range r.Tools {
		for _, d := range append(t.FunctionDeclarations, t.FunctionDeclarations2...) {
			params := d.Parameters
			if len(params) == 0 {
				params = d.JSONSchema
			}
			c.tools = append(c.tools, tool{name: d.Name, params: params})
		}
	}
	tc := r.ToolConfig
	if tc == nil {
		tc = r.ToolConfig2
	}
	if tc != nil {
		fc := tc.FunctionCallingConfig
		if fc == nil {
			fc = tc.FunctionCallingConfig2
		}
		if fc != nil {
			switch strings.ToUpper(fc.Mode) {
			case "ANY":
				c.force = "*"
				names := fc.AllowedFunctionNames
				if len(names) == 0 {
					names = fc.AllowedFunctionNames2
				}
				if len(names) > 0 {
					c.force = names[0]
				}
			case "NONE":
				c.noTools = true
			}
		}
	}
	return c, nil
}

type geminiCallingConfig struct {
	Mode                  string   `json:"mode"`
	AllowedFunctionNames  []string `json:"allowedFunctionNames"`
	AllowedFunctionNames2 []string `json:"allowed_function_names"`
}

type geminiToolConfig struct {
	FunctionCallingConfig  *geminiCallingConfig `json:"functionCallingConfig"`
	FunctionCallingConfig2 *geminiCallingConfig `json:"function_calling_config"`
}

// geminiResponseText flattens a functionResponse for the answer text.
func geminiResponseText(raw json.RawMessage) string {
	var fr struct {
		Response json.RawMessage `json:"response"`
	}
	if json.Unmarshal(raw, &fr) != nil || len(fr.Response) == 0 {
		return string(raw)
	}
	var m map[string]any
	if json.Unmarshal(fr.Response, &m) == nil {
		for _, k := range []string{"result", "output", "content"} {
			if s, ok := m[k].(string); ok {
				return s
			}
		}
	}
	return string(fr.Response)
}

// pickTool returns the tool to call, or nil to answer with text. A tool is
// called when the request declares tools, the last message is not a tool
// result, tool_choice does not forbid it, and either tool_choice forces
// one (a named tool, or any/required: the first tool) or the last user
// message names a tool as a whole word (case-insensitive) outside
// <system-reminder> blocks: Claude Code's reminders list its tools on every
// turn.
func (c *chat) pickTool() *tool {
	if len(c.tools) == 0 || c.toolResult || c.noTools {
		return nil
	}
	if c.force == "*" {
		return &c.tools[0]
	}
	if c.force != "" {
		for i := range c.tools {
			if c.tools[i].name == c.force {
				return &c.tools[i]
			}
		}
		return &c.tools[0]
	}
	lower := strings.ToLower(withoutReminders(c.text))
	for i := range c.tools {
		if n := c.tools[i].name; n != "" && namesWord(lower, strings.ToLower(n)) {
			return &c.tools[i]
		}
	}
	return nil
}

// withoutReminders is s without its <system-reminder>…</system-reminder>
// blocks (an unclosed one runs to the end).
func withoutReminders(s string) string {
	const open, end = "<system-reminder>", "</system-reminder>"
	var b strings.Builder
	for {
		before, inside, found := strings.Cut(s, open)
		b.WriteString(before)
		if !found {
			return b.String()
		}
		b.WriteByte(' ')
		if _, s, found = strings.Cut(inside, end); !found {
			return b.String()
		}
	}
}

// namesWord reports whether word occurs in s with no letter, digit or
// underscore (or any non-ASCII byte) on either side.
func namesWord(s, word string) bool {
	inWord := func(i int) bool {
		if i < 0 || i >= len(s) {
			return false
		}
		c := s[i]
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
	}
	for off := 0; ; {
		i := strings.Index(s[off:], word)
		if i < 0 {
			return false
		}
		i += off
		if !inWord(i-1) && !inWord(i+len(word)) {
			return true
		}
		off = i + 1
	}
}

// toolArgs builds arguments for a call to t: every required property of its
// schema (all properties when none is marked required) gets a value of its
// type: the first enum value, "mock" for strings, 1 for numbers, true for
// booleans, [] and {} for arrays and objects.
func toolArgs(t *tool) []byte {
	var s struct {
		Properties map[string]struct {
			Type any   `json:"type"`
			Enum []any `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(t.params, &s) != nil || len(s.Properties) == 0 {
		return []byte("{}")
	}
	names := s.Required
	if len(names) == 0 {
		for n := range s.Properties {
			names = append(names, n)
		}
	}
	out := make(map[string]any, len(names))
	for _, n := range names {
		p := s.Properties[n]
		if len(p.Enum) > 0 {
			out[n] = p.Enum[0]
			continue
		}
		typ, _ := p.Type.(string)
		if l, ok := p.Type.([]any); ok { // ["null","integer"]: the first non-null type
			for _, e := range l {
				if s, _ := e.(string); s != "" && s != "null" {
					typ = s
					break
				}
			}
		}
		switch strings.ToLower(typ) {
		case "integer", "number":
			out[n] = 1
		case "boolean":
			out[n] = true
		case "array":
			out[n] = []any{}
		case "object":
			out[n] = map[string]any{}
		default:
			out[n] = "mock"
		}
	}
	b, _ := json.Marshal(out)
	return b
}
