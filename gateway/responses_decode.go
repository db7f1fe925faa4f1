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

// DialectResponses is OpenAI's Responses API (POST /v1/responses) as a
// client dialect. Its errors are OpenAI's.
const DialectResponses = provider.DialectResponses

// This file decodes a Responses API request into the canonical request. The
// client's body rides along whole in Request.Passthrough, so an OpenAI
// target gets it unchanged; every other target gets the translation below.
// The translation's Extra fields are in Chat Completions terms (Dialect
// "openai": response_format from text.format, reasoning_effort, ...), so an
// OpenAI-compatible chat target receives them as if a Chat Completions
// client had sent them. What only OpenAI's Responses API can serve
// (previous_response_id, item_reference, hosted tools, files by id) sets
// Passthrough.Only: such a request goes only to a target that relays it.

// rsDecoder collects a Responses request's canonical form.
type rsDecoder struct {
	in     *inbound
	system []string // system and developer input messages, in order
	calls  map[string]string
	only   string // the first thing that needs a relaying target
	lost   []string
	// instructions, and whether the body had input and routing fields.
	instructions      string
	hasInput, routing bool
}

// drop records a field the translation leaves out.
func (d *rsDecoder) drop(f string) {
	for _, l := range d.lost {
		if l == f {
			return
		}
	}
	if len(d.lost) < 32 {
		d.lost = append(d.lost, f)
	}
}

// need records that f can only be served by a target that relays the
// request to OpenAI's Responses API.
func (d *rsDecoder) need(f string) {
	if d.only == "" {
		d.only = f
	}
}

// decodeResponses decodes a Responses API body. The canonical request has
// Dialect "openai" (its Extra in Chat Completions terms) and Passthrough set
// to the body without the gateway's own fields.
func decodeResponses(body []byte) (*inbound, error) {
	in := &inbound{dialect: DialectResponses, req: &provider.Request{Dialect: DialectOpenAI}}
	r := in.req
	d := &rsDecoder{in: in}
	err := eachField(body, func(k string, v json.RawMessage) error {
		if err := d.field(k, v); err != nil {
			return badRequest("invalid %q: %v", k, err)
		}
		return nil
	})
	if err != nil {
		return nil, notObjectFault(err)
	}
	if in.model == "" {
		return nil, badRequest("missing \"model\"")
	}
	if !d.hasInput && d.only == "" {
		return nil, badRequest("missing \"input\" (a string or a list of input items)")
	}
	if d.instructions != "" {
		d.system = append([]string{d.instructions}, d.system...)
	}
	r.System = strings.Join(d.system, "\n\n")
	raw := body // the request owns its body (readBody)
	if d.routing {
		if raw, err = rawjson.Splice(nil, body, []rawjson.Field{{Key: "fallbacks", Mode: rawjson.Delete}}); err != nil {
			return nil, badRequest("request body is not a JSON object: %v", err)
		}
	}
	r.Passthrough = &provider.Passthrough{Dialect: provider.DialectResponses, Body: raw, Only: d.only, Untranslated: d.lost}
	return in, nil
}

// field decodes one top-level field.
func (d *rsDecoder) field(k string, v json.RawMessage) (err error) {
	in, r := d.in, d.in.req
	null := rawjson.IsNull(v)
	switch k {
	case "model":
		in.model, err = rawjson.String(v)
	case "input":
		d.hasInput = !null
		err = d.input(v)
	case "instructions":
		if !null {
			d.instructions, err = rawjson.String(v)
		}
	case "max_output_tokens":
		if !null {
			err = unmarshalInt(v, &r.MaxTokens)
		}
	case "temperature":
		err = unmarshalFloat(v, &r.Temperature)
	case "top_p":
		err = unmarshalFloat(v, &r.TopP)
	case "stream":
		if !null {
			err = unmarshalBool(v, &r.Stream)
		}
	case "metadata":
		err = rawjson.Unmarshal(v, &r.Metadata)
	case "fallbacks":
		d.routing = true
		in.fallbacks, err = stringOrList(v)
	default:
		err = d.option(k, v, null)
	}
	return err
}

// option decodes a field that shapes the answer (tools, formats) or that
// only OpenAI can serve; what the translation leaves out is recorded.
func (d *rsDecoder) option(k string, v json.RawMessage, null bool) error {
	r := d.in.req
	switch k {
	case "tools":
		return d.tools(v)
	case "tool_choice":
		return d.toolChoice(v)
	case "text":
		return d.text(v)
	case "reasoning":
		return d.reasoning(v)
	case "parallel_tool_calls", "user", "safety_identifier", "prompt_cache_key", "service_tier":
		if !null {
			setExtra(&r.Extra, k, v) // the same field in Chat Completions
		}
	case "previous_response_id", "conversation", "prompt":
		if !null && string(v) != `""` {
			d.need(k)
		}
	case "background":
		if string(bytes.TrimSpace(v)) == "true" {
			d.need(k)
		}
	case "store", "stream_options":
		// store: the answer's output items are kept (responses_items.go)
	default:
		if !null {
			d.drop(k) // include, truncation, max_tool_calls, top_logprobs...
		}
	}
	return nil
}

// reasoning maps reasoning.effort to Chat Completions' reasoning_effort.
func (d *rsDecoder) reasoning(v json.RawMessage) error {
	var re struct {
		Effort  string `json:"effort"`
		Summary string `json:"summary"`
	}
	if err := rawjson.Unmarshal(v, &re); err != nil {
		return err
	}
	if re.Effort != "" {
		setExtra(&d.in.req.Extra, "reasoning_effort", json.AppendEscape(nil, re.Effort, 0))
	}
	if re.Summary != "" {
		d.drop("reasoning.summary")
	}
	return nil
}

// input decodes "input": a string (one user message) or a list of items.
func (d *rsDecoder) input(v json.RawMessage) error {
	r := d.in.req
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		s, err := rawjson.String(v)
		r.Messages = append(r.Messages, provider.Message{Role: provider.RoleUser,
			Content: []provider.Part{{Type: provider.PartText, Text: s}}})
		return err
	}
	items, err := objects(v)
	if err != nil {
		return err
	}
	for i, it := range items {
		if err := d.item(it); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
	}
	return nil
}

func str(obj map[string]json.RawMessage, k string) string {
	v, ok := obj[k]
	if !ok || rawjson.IsNull(v) {
		return ""
	}
	s, _ := rawjson.String(v)
	return s
}

// item decodes one input item.
func (d *rsDecoder) item(it map[string]json.RawMessage) error {
	r := d.in.req
	typ := str(it, "type")
	if typ == "" && it["role"] != nil {
		typ = "message"
	}
	switch typ {
	case "message":
		return d.message(str(it, "role"), it["content"])
	case "function_call":
		call := provider.ToolCall{ID: str(it, "call_id"), Name: str(it, "name"), Arguments: argsObject(str(it, "arguments"))}
		if d.calls == nil {
			d.calls = map[string]string{}
		}
		d.calls[call.ID] = call.Name
		part := provider.Part{Type: provider.PartToolCall, ToolCall: &call}
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == provider.RoleAssistant {
			r.Messages[n-1].Content = append(r.Messages[n-1].Content, part)
		} else {
			r.Messages = append(r.Messages, provider.Message{Role: provider.RoleAssistant, Content: []provider.Part{part}})
		}
	case "function_call_output":
		id := str(it, "call_id")
		out, err := d.outputText(it["output"])
		if err != nil {
			return fmt.Errorf("function_call_output: %w", err)
		}
		r.Messages = append(r.Messages, provider.Message{Role: provider.RoleTool, Content: []provider.Part{{
			Type: provider.PartToolResult, ToolResult: &provider.ToolResult{CallID: id, Name: d.calls[id], Content: out}}}})
	case "reasoning":
		// OpenAI's own reasoning (often encrypted): only OpenAI reads it
		// back, and the Passthrough body still carries it.
		d.drop("input[type=reasoning]")
	case "item_reference":
		// One the item store held is resolved already (resolveRefs).
		id := str(it, "id")
		if len(id) > maxItemID {
			id = id[:maxItemID] // never looked up; named in the 400 as far as that
		}
		d.need("item_reference " + strconv.Quote(id))
	default:
		d.need(typ) // hosted tools' calls and outputs...
	}
	return nil
}

// message decodes a message item's content for role.
func (d *rsDecoder) message(role string, content json.RawMessage) error {
	var text strings.Builder
	var parts []provider.Part
	v := bytes.TrimSpace(content)
	if len(v) > 0 && v[0] == '"' {
		s, err := rawjson.String(v)
		if err != nil {
			return err
		}
		parts = []provider.Part{{Type: provider.PartText, Text: s}}
		text.WriteString(s)
	} else if !rawjson.IsNull(v) && len(v) > 0 {
		objs, err := objects(v)
		if err != nil {
			return fmt.Errorf("content: %w", err)
		}
		for _, o := range objs {
			p, ok := d.part(o)
			if !ok {
				continue
			}
			if text.Len() > 0 && p.Text != "" {
				text.WriteByte('\n')
			}
			text.WriteString(p.Text)
			parts = append(parts, p)
		}
	}
	r := d.in.req
	switch role {
	case "system", "developer":
		d.system = append(d.system, text.String())
	case "user":
		r.Messages = append(r.Messages, provider.Message{Role: provider.RoleUser, Content: parts})
	case "assistant":
		r.Messages = append(r.Messages, provider.Message{Role: provider.RoleAssistant, Content: parts})
	default:
		return badRequest("unknown role %q (want user, assistant, system or developer)", role)
	}
	return nil
}

// part decodes one content part; ok is false for a part the translation
// leaves out (it then needs a relaying target).
func (d *rsDecoder) part(o map[string]json.RawMessage) (provider.Part, bool) {
	switch t := str(o, "type"); t {
	case "input_text", "output_text", "text":
		return provider.Part{Type: provider.PartText, Text: str(o, "text")}, true
	case "refusal":
		return provider.Part{Type: provider.PartText, Text: str(o, "refusal")}, true
	case "input_image":
		if u := str(o, "image_url"); u != "" {
			return provider.Part{Type: provider.PartImage, Image: imageFromURL(u)}, true
		}
		d.need("input_image by file_id")
	default:
		d.need(t) // input_file, input_audio...
	}
	return provider.Part{}, false
}

// outputText is a function_call_output's output: a string, or the text of
// its parts (an image in it needs a relaying target).
func (d *rsDecoder) outputText(v json.RawMessage) (string, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || rawjson.IsNull(v) {
		return "", nil
	}
	if v[0] == '"' {
		return rawjson.String(v)
	}
	objs, err := objects(v)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, o := range objs {
		if p, ok := d.part(o); ok && p.Type == provider.PartText {
			b.WriteString(p.Text)
		} else if ok {
			d.need("an image in function_call_output")
		}
	}
	return b.String(), nil
}

// argsObject turns a function call's arguments string into the canonical
// JSON object; text that is not JSON is kept as a JSON string.
func argsObject(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}")
	}
	if rawjson.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return json.AppendEscape(nil, s, 0)
}
