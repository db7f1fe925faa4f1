package openai

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/internal/sse"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// This file relays OpenAI Responses API requests ({base}/responses) whose
// provider.Request carries a Passthrough body of provider.DialectResponses:
// the body goes out as the client sent it (the model and stream flag set for
// the attempt) and the answer comes back verbatim in Response.Raw or, for a
// stream, in each Chunk.Raw, with its canonical meaning decoded beside it
// for the engine (first token, usage, tool calls, cost).

// Relays implements provider.Relayer: OpenAI itself (and a provider whose
// Config.Responses is set) relays Responses API bodies; Azure and the
// compatible family get the request translated to Chat Completions.
func (a *Adapter) Relays(dialect string) bool {
	return dialect == provider.DialectResponses && a.responses
}

// relayed reports whether req goes to {base}/responses as it is.
func (a *Adapter) relayed(req *provider.Request) bool {
	return req.Passthrough != nil && a.Relays(req.Passthrough.Dialect)
}

func (a *Adapter) sendResponses(ctx context.Context, req *provider.Request, stream bool) (*http.Response, httpcall.Call, error) {
	model := cmp.Or(req.Model, a.model)
	call := httpcall.Call{Provider: a.name, Model: model}
	body, err := relayBody(req.Passthrough.Body, model, stream)
	if err != nil {
		return nil, call, call.Invalid(fmt.Errorf("encoding: %w", err))
	}
	hdr := a.hdr
	if stream {
		hdr = a.hdrStream
	}
	resp, err := call.Post(ctx, a.client, a.base+"/responses", body, hdr)
	return resp, call, err
}

// relayBody is body with "model" set to model and "stream" to stream (true,
// or absent), every other field as it was, in its order. A body that
// already says both is returned as it is.
func relayBody(body []byte, model string, stream bool) ([]byte, error) {
	var gotModel string
	var gotStream, hasModel bool
	err := rawjson.EachField(body, func(k, v []byte) (err error) {
		switch string(k) {
		case "model":
			hasModel = true
			gotModel, err = rawjson.String(v)
		case "stream":
			gotStream = string(v) == "true"
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if hasModel && gotModel == model && gotStream == stream {
		return body, nil
	}
	fields := []rawjson.Field{{Key: "model", Value: json.AppendEscape(nil, model, 0)}, {Key: "stream", Mode: rawjson.Delete}}
	if stream {
		fields[1] = rawjson.Field{Key: "stream", Value: []byte("true")}
	}
	return rawjson.Splice(nil, body, fields)
}

func (a *Adapter) chatResponses(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	resp, call, err := a.sendResponses(ctx, req, false)
	if err != nil {
		return nil, err
	}
	out, body, err := httpcall.Answer(ctx, call, resp, DecodeResponse, requestID(resp.Header))
	if err != nil {
		return nil, err
	}
	out.Raw = body
	return out, nil
}

func (a *Adapter) streamResponses(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	resp, call, err := a.sendResponses(ctx, req, true)
	if err != nil {
		return nil, err
	}
	dec := &respDecoder{call: call, h: resp.Header}
	return call.OpenStream(ctx, resp, dec, requestID(resp.Header))
}

// respObject is the part of a Responses API response object the adapter
// reads.
type respObject struct {
	ID                string          `json:"id"`
	Model             string          `json:"model"`
	Status            string          `json:"status"`
	Error             json.RawMessage `json:"error"`
	Output            []respItem      `json:"output"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *respUsage `json:"usage"`
}

type respItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

type respUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

var errFailed = errors.New("response failed")

// DecodeResponse parses a Responses API response object into a canonical
// Response (Provider, RequestID and Raw are left for the caller): the text
// of its message items, its function calls and usage. A response whose
// status is "failed" or that carries an error is an error.
func DecodeResponse(body []byte) (*provider.Response, error) {
	var r respObject
	if err := rawjson.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	if r.Status == "failed" || (len(r.Error) > 0 && !rawjson.IsNull(r.Error)) {
		return nil, errFailed
	}
	out := &provider.Response{ID: r.ID, Model: r.Model}
	var text bytes.Buffer
	for _, it := range r.Output {
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				text.WriteString(c.Text)
				text.WriteString(c.Refusal)
			}
		case "function_call":
			out.ToolCalls = append(out.ToolCalls, provider.ToolCall{ID: it.CallID, Name: it.Name, Arguments: argsJSON(it.Arguments)})
		}
	}
	out.Text = text.String()
	out.FinishReason = respFinish(r.Status, r.IncompleteDetails, len(out.ToolCalls) > 0)
	if r.Usage != nil {
		out.Usage = provider.Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}
	}
	return out, nil
}

// respFinish is the canonical finish reason of a response's status.
func respFinish(status string, inc *struct {
	Reason string `json:"reason"`
}, tools bool) string {
	if status == "incomplete" {
		if inc != nil && inc.Reason == "content_filter" {
			return provider.FinishFiltered
		}
		return provider.FinishLength
	}
	if tools {
		return provider.FinishToolCalls
	}
	return provider.FinishStop
}

// respEvent is the part of a Responses API stream event the decoder reads.
type respEvent struct {
	Type        string      `json:"type"`
	OutputIndex int         `json:"output_index"`
	Delta       string      `json:"delta"`
	Item        *respItem   `json:"item"`
	Response    *respObject `json:"response"`
}

// respDecoder turns Responses API stream events into canonical chunks, each
// carrying its event verbatim in Chunk.Raw.
type respDecoder struct {
	call  httpcall.Call
	h     http.Header
	tools map[int]int     // output_index of a function_call item -> tool index
	final json.RawMessage // the response object of response.completed/incomplete
}

// DecodeWhole implements httpcall.WholeDecoder: a whole response object for a
// streaming request, relayed as it is.
func (d *respDecoder) DecodeWhole(body []byte) (*provider.Response, error) {
	return httpcall.RelayWhole(DecodeResponse, body, true)
}

// RawAnswer implements provider.RawAnswerer: the response object that
// response.completed (or response.incomplete) carries is the one a
// non-streaming request gets.
func (d *respDecoder) RawAnswer() json.RawMessage { return d.final }

// Decode implements httpcall.Decoder. The stream ends after response.completed
// or response.incomplete; response.failed and error events are classified
// errors.
func (d *respDecoder) Decode(ev sse.Event) ([]provider.Chunk, bool, error) {
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 || bytes.Equal(data, done) {
		return nil, bytes.Equal(data, done), nil
	}
	var e respEvent
	if err := rawjson.Unmarshal(data, &e); err != nil {
		return nil, false, err
	}
	if e.Type == "" {
		e.Type = ev.Name
	}
	raw := &provider.RawEvent{Name: ev.Name, Data: data}
	c := provider.Chunk{Raw: raw}
	switch e.Type {
	case "error", "response.failed":
		return nil, false, d.call.StreamEvent(d.h, ev.Name, ev.Data)
	case "response.created":
		if r := e.Response; r != nil {
			c.ID, c.Model = r.ID, r.Model
		}
	case "response.output_text.delta", "response.refusal.delta":
		c.Text = e.Delta
	case "response.output_item.added":
		if it := e.Item; it != nil && it.Type == "function_call" {
			if d.tools == nil {
				d.tools = make(map[int]int, 1)
			}
			i := len(d.tools)
			d.tools[e.OutputIndex] = i
			c.ToolCall = &provider.ToolCallDelta{Index: i, ID: it.CallID, Name: it.Name, Arguments: it.Arguments}
		}
	case "response.function_call_arguments.delta":
		if i, ok := d.tools[e.OutputIndex]; ok && e.Delta != "" {
			c.ToolCall = &provider.ToolCallDelta{Index: i, Arguments: e.Delta}
		}
	case "response.completed", "response.incomplete":
		_ = rawjson.EachField(data, func(k, v []byte) error {
			if string(k) == "response" {
				d.final = v
			}
			return nil
		})
		status := "completed"
		if e.Type == "response.incomplete" {
			status = "incomplete"
		}
		var inc *struct {
			Reason string `json:"reason"`
		}
		if r := e.Response; r != nil {
			inc = r.IncompleteDetails
			if r.Usage != nil {
				c.Usage = &provider.Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}
			}
		}
		c.FinishReason = respFinish(status, inc, len(d.tools) > 0)
		if c.Usage == nil {
			c.Usage = &provider.Usage{}
		}
		return []provider.Chunk{c}, true, nil
	}
	return []provider.Chunk{c}, false, nil
}
