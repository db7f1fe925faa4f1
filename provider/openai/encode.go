package openai

import (
	"bytes"
	"fmt"

	"github.com/segmentio/encoding/json"

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
	// raw, when set, is the content string as its client sent it
	// (Part.Raw), in place of Content; raws[i], when set, is the text of
	// the text part Content[i] so (see appendWireMessage).
	raw  []byte
	raws [][]byte
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
	parts, dropped, err := encodeParts(req, model, stream, q)
	if len(parts) == 1 {
		return parts[0], dropped, err
	}
	return bytes.Join(parts, nil), dropped, err
}

// encodeParts is encode's body as the slices to send one after another:
// a request in this dialect relayed (slices of the client's body around
// the fields set), or one from another dialect whose texts the client
// sent are slices of its body too (see translate).
func encodeParts(req *provider.Request, model string, stream bool, q quirks) ([][]byte, []string, error) {
	if chatRelayed(req) {
		return splice(req, model, stream, q)
	}
	if req.Dialect != Dialect {
		return translate(req, model, stream, q)
	}
	var drops httpcall.Drops
	req, w, err := wire(req.Full, model, stream, q, &drops)
	if err != nil {
		return nil, nil, err
	}
	body, err := httpcall.Marshal(w, req)
	if err != nil {
		return nil, nil, err
	}
	extras := make([]map[string]json.RawMessage, len(w.Messages))
	for i := range w.Messages {
		extras[i] = w.Messages[i].extra
	}
	body, err = httpcall.MessageExtras(body, extras)
	if err == nil {
		body, err = httpcall.MergeExtra(body, req.Extra, "model", "stream", "stream_options")
	}
	return [][]byte{body}, drops.Names(), err
}

// wire decodes a request with decoded (its Full or its Lean) and returns
// it with its wire request, naming in drops what it cannot send.
func wire(decoded func() (*provider.Request, error), model string, stream bool, q quirks, drops *httpcall.Drops) (*provider.Request, *wireRequest, error) {
	req, w, err := wireHead(decoded, model, stream, q, drops)
	if err != nil {
		return nil, nil, err
	}
	w.Messages = make([]wireMessage, 0, len(req.Messages)+1)
	err = eachMessage(req, drops, false, func(ms []wireMessage) error {
		w.Messages = append(w.Messages, ms...)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return req, w, nil
}

// wireHead is wire's request without its messages.
func wireHead(decoded func() (*provider.Request, error), model string, stream bool, q quirks, drops *httpcall.Drops) (*provider.Request, *wireRequest, error) {
	req, err := decoded()
	if err != nil {
		return nil, nil, err
	}
	w := &wireRequest{Model: model, Stream: stream}
	options(w, req, stream, q, drops)
	encodeTools(w, req)
	if err := encodeToolChoice(w, req.ToolChoice); err != nil {
		return nil, nil, err
	}
	return req, w, nil
}

// eachMessage gives to use, in order, the wire messages of req's system
// prompt and of each of its messages (none, one, or more for one with tool
// results), naming in drops what it cannot send. The slice use gets is
// use's only until it returns, and so, if reuse, is what its messages
// point to: the next message's reuse them.
func eachMessage(req *provider.Request, drops *httpcall.Drops, reuse bool, use func([]wireMessage) error) error {
	ms := make([]wireMessage, 0, 2)
	if req.System != "" {
		if err := use(append(ms, wireMessage{Role: "system", Content: req.System})); err != nil {
			return err
		}
	}
	c := content{same: req.Dialect == Dialect, drops: drops, reuse: reuse}
	for i := range req.Messages {
		var err error
		if ms, err = appendMessage(ms[:0], &req.Messages[i], &c); err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		if err := use(ms); err != nil {
			return err
		}
	}
	return nil
}

// options sets the request's sampling, limits, metadata and output format
// on w, naming in drops what the provider cannot take.
func options(w *wireRequest, req *provider.Request, stream bool, q quirks, drops *httpcall.Drops) {
	same := req.Dialect == Dialect
	w.Temperature, w.TopP, w.Stop = req.Temperature, req.TopP, req.Stop
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
}

// encodeTools sets the function tools (and parallel_tool_calls, which the
// API refuses without tools).
func encodeTools(w *wireRequest, req *provider.Request) {
	if len(req.Tools) > 0 {
		w.ParallelToolCalls = req.ParallelToolCalls
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Type: "function",
			Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
}

func encodeToolChoice(w *wireRequest, tc *provider.ToolChoice) error {
	if tc == nil {
		return nil
	}
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
		return fmt.Errorf("unknown tool_choice mode %q", tc.Mode)
	}
	return nil
}
