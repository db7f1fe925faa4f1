package gateway

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// ---- Anthropic request decoding ----

type anMessage struct {
	Role    string
	Content json.RawMessage
	Extra   map[string]json.RawMessage
}

// decodeAnthropic decodes an Anthropic Messages request body. Top-level
// fields the canonical request lacks (thinking, top_k, unknown fields) go to
// Request.Extra; block fields (cache_control, citations) to Part.Extra. A
// system prompt given as blocks, and tools or tool_choice with more than the
// canonical form holds, are also kept verbatim in Extra so a same-dialect
// target receives them unchanged. Nothing decoded points into body.
func decodeAnthropic(body []byte) (*inbound, error) { return anthropicRequest(bytes.Clone(body)) }

// anthropicRequest is decodeAnthropic of a body the request keeps.
func anthropicRequest(body []byte) (*inbound, error) { return decodeWhole(DialectAnthropic, body) }

// anthropicDecode decodes an Anthropic body into in whole, or with relay
// only what decodeChat reads.
func anthropicDecode(body []byte, in *inbound, relay bool) error {
	return decodeDialect(body, in, relay, DialectAnthropic, anthropicLater, anthropicField)
}

// anthropicLater are the fields a relay decoding leaves for later (see
// deferField).
var anthropicLater = []string{"system", "stop_sequences", "tools", "tool_choice", "output_config", "top_k"}

// anthropicField decodes the Anthropic field k into in; known is false for
// a field decodeRequest decodes, or keeps in Extra.
func anthropicField(in *inbound, k string, v json.RawMessage) (known bool, err error) {
	r := in.req
	known = true
	switch k {
	case "messages":
		err = decodeANMessages(v, r, in.lean)
	case "system":
		err = decodeANSystem(v, r)
	case "max_tokens":
		err = unmarshalInt(v, &r.MaxTokens)
	case "stop_sequences":
		r.Stop, err = stringOrList(v)
	case "metadata":
		var md map[string]any
		if err = rawjson.Unmarshal(v, &md); err == nil && len(md) > 0 {
			r.Metadata = make(map[string]string, len(md))
			for mk, mv := range md {
				if s, ok := mv.(string); ok {
					r.Metadata[mk] = s
				}
			}
		}
	case "tools":
		err = decodeANTools(v, r)
	case "tool_choice":
		err = decodeANToolChoice(v, r)
	case "output_config":
		err = decodeANOutputConfig(v, r)
	case "top_k":
		err = unmarshalOpt(v, &r.TopK, unmarshalInt)
	default:
		known = false
	}
	return known, err
}

func decodeANSystem(v json.RawMessage, r *provider.Request) error {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	if v[0] == '"' {
		var err error
		if r.System, err = rawjson.String(v); err != nil {
			return typeError("", "a string or an array of text blocks", v)
		}
		return nil
	}
	blocks, err := objects(v)
	if err != nil {
		return typeError("", "a string or an array of text blocks", v)
	}
	lossy := lossyNames{r: r}
	for _, bl := range blocks {
		var typ string
		_ = rawjson.Unmarshal(bl["type"], &typ)
		if typ != "text" {
			lossy.add("system[type=" + typ + "]")
			continue
		}
		var text string
		if text, err = rawjson.String(bl["text"]); err != nil {
			return typeError("[].text", "a string", bl["text"])
		}
		r.System = provider.JoinText(r.System, []provider.Part{{Type: provider.PartText, Text: text}})
		lossy.keys("system[].", bl, "type", "text")
	}
	if lossy.any {
		setExtra(&r.Extra, "system", v) // cache_control survives same-dialect
	}
	return nil
}

// lossyNames records in Request.Lossy what a decoded field could not hold.
type lossyNames struct {
	r   *provider.Request
	any bool
}

func (l *lossyNames) add(name string) {
	l.any = true
	if !slices.Contains(l.r.Lossy, name) {
		l.r.Lossy = append(l.r.Lossy, name)
	}
}

// keys adds prefix+k for each key of obj not in known, in key order.
func (l *lossyNames) keys(prefix string, obj map[string]json.RawMessage, known ...string) {
	ks := make([]string, 0, len(obj))
	for k := range obj {
		if !slices.Contains(known, k) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	for _, k := range ks {
		l.add(prefix + k)
	}
}

// anMessageField reads field k of the message at index i into m.
func anMessageField(m *anMessage, i int, k string, fv []byte) error {
	var err error
	switch k {
	case "role":
		if m.Role, err = rawjson.String(fv); err != nil {
			return typeError("["+strconv.Itoa(i)+"].role", "a string", fv)
		}
	case "content":
		m.Content = fv // it points into the request's body, which the request keeps
	default:
		if !rawjson.Valid(fv) {
			return errNotObject
		}
		setExtra(&m.Extra, k, fv) // clear_at, output_config...
	}
	return nil
}

func decodeANMessages(v json.RawMessage, r *provider.Request, lean bool) error {
	if !isArray(v) {
		return typeError("", "an array of messages", v)
	}
	if lean && leanMessages(v, r) {
		return nil
	}
	msgs, err := messageArray(v, anMessageField)
	if err != nil {
		return err
	}
	r.Messages = make([]provider.Message, 0, len(msgs))
	var arena []provider.Part // a lean decoding's parts (see leanContent)
	if lean {
		arena = make([]provider.Part, 0, 2*len(msgs))
	}
	for i, m := range msgs {
		var parts []provider.Part
		ok := false
		if lean {
			parts, ok = leanContent(m.Content, &arena)
		}
		if !ok {
			var err error
			if parts, err = anContent(m.Content, lean); err != nil {
				return prefixError(fmt.Sprintf("[%d].content", i), err)
			}
		}
		r.Messages = appendANMessage(r.Messages, m.Role, parts, m.Extra)
	}
	return nil
}

// appendANMessage appends a message of role to msgs. Tool results in a
// user turn become a tool message (first, as Anthropic requires them
// first), the rest a user message. Any other role, system included, is
// kept as it came.
func appendANMessage(msgs []provider.Message, role string, parts []provider.Part, extra map[string]json.RawMessage) []provider.Message {
	if role == provider.RoleUser {
		results, rest := splitResults(parts)
		if len(results) > 0 {
			msgs = append(msgs, provider.Message{Role: provider.RoleTool, Content: results, Extra: extra})
			if len(rest) > 0 {
				msgs = append(msgs, provider.Message{Role: role, Content: rest})
			}
			return msgs
		}
	}
	return append(msgs, provider.Message{Role: role, Content: parts, Extra: extra})
}

// splitResults returns parts' tool results and the rest, each in order:
// slices of parts when the results come first (as Anthropic requires).
func splitResults(parts []provider.Part) (results, rest []provider.Part) {
	k := 0
	for k < len(parts) && parts[k].Type == provider.PartToolResult {
		k++
	}
	if !slices.ContainsFunc(parts[k:], func(p provider.Part) bool { return p.Type == provider.PartToolResult }) {
		if k == len(parts) {
			return parts[:k:k], nil
		}
		return parts[:k:k], parts[k:]
	}
	for _, p := range parts {
		if p.Type == provider.PartToolResult {
			results = append(results, p)
		} else {
			rest = append(rest, p)
		}
	}
	return results, rest
}

// decodeANContent decodes a string or an array of content blocks; with
// lean, texts may be left undecoded in Part.Raw.
func decodeANContent(v json.RawMessage, lean bool) ([]provider.Part, error) {
	if lean {
		if parts, ok := leanContent(v, nil); ok {
			return parts, nil
		}
	}
	return anContent(v, lean)
}

// anContent is decodeANContent of any content, without leanContent.
func anContent(v json.RawMessage, lean bool) ([]provider.Part, error) {
	return decodeContent(v, lean, func(typ string, obj map[string]json.RawMessage, p *provider.Part) (err error) {
		switch typ {
		case "text":
			if err = textPart(p, obj["text"], lean); err != nil {
				return typeError("text", "a string", obj["text"])
			}
			delete(obj, "text")
		case "image":
			var src struct {
				Type      string `json:"type"`
				MediaType string `json:"media_type"`
				Data      string `json:"data"`
				URL       string `json:"url"`
			}
			// Other sources (file, a malformed one) stay verbatim for the
			// provider to judge.
			if rawjson.Unmarshal(obj["source"], &src) == nil && (src.Type == "base64" || src.Type == "url") {
				p.Type = provider.PartImage
				p.Image = &provider.Image{URL: src.URL, MediaType: src.MediaType, Data: src.Data}
				delete(obj, "source")
			}
		case "tool_use":
			tc := &provider.ToolCall{}
			_ = rawjson.Unmarshal(obj["id"], &tc.ID)
			_ = rawjson.Unmarshal(obj["name"], &tc.Name)
			tc.Arguments = append(json.RawMessage(nil), bytes.TrimSpace(obj["input"])...)
			if len(tc.Arguments) == 0 {
				tc.Arguments = json.RawMessage(`{}`)
			}
			delete(obj, "id")
			delete(obj, "name")
			delete(obj, "input")
			p.Type, p.ToolCall = provider.PartToolCall, tc
		case "tool_result":
			tr := &provider.ToolResult{}
			_ = rawjson.Unmarshal(obj["tool_use_id"], &tr.CallID)
			_ = rawjson.Unmarshal(obj["is_error"], &tr.IsError)
			var inner []provider.Part
			if inner, err = decodeANContent(obj["content"], lean); err != nil {
				return prefixError("content", err)
			}
			texts := 0
			for i := range inner {
				if inner[i].Type == provider.PartText {
					texts++
				}
			}
			if len(inner) == 1 && texts == 1 && inner[0].Raw != nil {
				p.Raw = inner[0].Raw // one text, left undecoded
			} else {
				for i := range inner {
					if inner[i].Type == provider.PartText {
						tr.Content += partText(&inner[i])
					}
				}
			}
			delete(obj, "tool_use_id")
			delete(obj, "is_error")
			if texts == len(inner) {
				delete(obj, "content") // else keep the rich content verbatim
			}
			p.Type, p.ToolResult = provider.PartToolResult, tr
		}
		return err
	})
}

func decodeANTools(v json.RawMessage, r *provider.Request) error {
	raw, err := objects(v)
	if err != nil {
		return typeError("", "an array of tools", v)
	}
	lossy := lossyNames{r: r}
	for i, obj := range raw {
		var typ string
		_ = rawjson.Unmarshal(obj["type"], &typ)
		if typ != "" && typ != "custom" {
			lossy.add("tools[type=" + typ + "]") // a server tool (web_search, bash, ...)
			continue
		}
		t := provider.Tool{Parameters: obj["input_schema"]}
		if t.Name, err = rawjson.String(obj["name"]); err != nil {
			return typeError(fmt.Sprintf("[%d].name", i), "a string", obj["name"])
		}
		if t.Description, err = rawjson.String(obj["description"]); err != nil {
			return typeError(fmt.Sprintf("[%d].description", i), "a string", obj["description"])
		}
		lossy.keys("tools[].", obj, "type", "name", "description", "input_schema") // cache_control, defer_loading...
		r.Tools = append(r.Tools, t)
	}
	if lossy.any {
		setExtra(&r.Extra, "tools", v)
	}
	return nil
}

func decodeANToolChoice(v json.RawMessage, r *provider.Request) error {
	if rawjson.IsNull(v) {
		return nil
	}
	if !isObject(v) {
		return typeError("", `an object such as {"type":"auto"}`, v)
	}
	var tc map[string]json.RawMessage
	if err := rawjson.Unmarshal(v, &tc); err != nil {
		return err
	}
	var typ, name string
	_ = rawjson.Unmarshal(tc["type"], &typ)
	_ = rawjson.Unmarshal(tc["name"], &name)
	lossy := lossyNames{r: r}
	switch typ {
	case "auto", "none":
		r.ToolChoice = &provider.ToolChoice{Mode: typ}
	case "any":
		r.ToolChoice = &provider.ToolChoice{Mode: "required"}
	case "tool":
		r.ToolChoice = &provider.ToolChoice{Mode: "tool", Name: name}
	default:
		lossy.add("tool_choice") // a type this gateway does not know: the API judges
	}
	var off bool
	if rawjson.Unmarshal(tc["disable_parallel_tool_use"], &off) == nil && tc["disable_parallel_tool_use"] != nil {
		on := !off
		r.ParallelToolCalls = &on
	}
	lossy.keys("tool_choice.", tc, "type", "name", "disable_parallel_tool_use")
	if lossy.any {
		setExtra(&r.Extra, "tool_choice", v)
	}
	return nil
}

// decodeANOutputConfig takes output_config.format (structured outputs);
// the rest (effort) only a target of this dialect gets.
func decodeANOutputConfig(v json.RawMessage, r *provider.Request) error {
	if rawjson.IsNull(v) {
		return nil
	}
	if !isObject(v) {
		return typeError("", "an object", v)
	}
	var oc map[string]json.RawMessage
	if err := rawjson.Unmarshal(v, &oc); err != nil {
		return err
	}
	lossy := lossyNames{r: r}
	if f := oc["format"]; f != nil && !rawjson.IsNull(f) {
		var jf struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		}
		if err := rawjson.Unmarshal(f, &jf); err != nil {
			return prefixError("format", err)
		}
		if jf.Type == "json_schema" {
			r.ResponseFormat = &provider.ResponseFormat{Type: "json_schema", Schema: bytes.Clone(jf.Schema)}
		} else {
			lossy.add("output_config.format")
		}
	}
	lossy.keys("output_config.", oc, "format")
	if lossy.any {
		setExtra(&r.Extra, "output_config", v)
	}
	return nil
}

// ---- Anthropic response encoding ----

func anStopReason(f string) string {
	switch f {
	case provider.FinishStop, "":
		return "end_turn"
	case provider.FinishLength:
		return "max_tokens"
	case provider.FinishToolCalls:
		return "tool_use"
	case provider.FinishFiltered:
		return "refusal"
	}
	return f
}

// anServiceTier is a service tier in Anthropic's words (OpenAI's "default"
// is Anthropic's "standard").
func anServiceTier(t string) string {
	if t == "default" {
		return "standard"
	}
	return t
}
