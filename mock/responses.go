package mock

import (
	"strconv"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/sse"
)

// This file speaks OpenAI's Responses API (POST /v1/responses): the
// request's input and tools are read like a chat, and the answer is a
// response object or its typed event stream, as api.openai.com sends them.

// parseResponses reads a Responses API request: the text of the last user
// input (or the output of a trailing function_call_output), its function
// tools and tool_choice.
func parseResponses(body []byte) (*chat, error) {
	var r struct {
		Model  string          `json:"model"`
		Stream bool            `json:"stream"`
		Input  json.RawMessage `json:"input"`
		Tools  []struct {
			Type       string          `json:"type"`
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"tools"`
		ToolChoice json.RawMessage `json:"tool_choice"`
	}
	if err := decodeBody(body, &r); err != nil {
		return nil, err
	}
	c := &chat{model: r.Model, stream: r.Stream, inputTokens: estimateTokens(body)}
	if len(r.Input) > 0 && r.Input[0] == '"' {
		_ = json.Unmarshal(r.Input, &c.text)
	} else if len(r.Input) > 0 {
		var items []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			Output  json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal(r.Input, &items); err != nil {
			return nil, err
		}
		if n := len(items); n > 0 && items[n-1].Type == "function_call_output" {
			c.text, _ = textOf(items[n-1].Output)
			c.toolResult = true
		} else {
			for i := n - 1; i >= 0; i-- {
				if items[i].Role == "user" {
					c.text, _ = textOf(items[i].Content)
					break
				}
			}
		}
	}
	for _, t := range r.Tools {
		if t.Type == "function" {
			c.tools = append(c.tools, tool{name: t.Name, params: t.Parameters})
		}
	}
	if tc := r.ToolChoice; len(tc) > 0 {
		var s string
		var o struct {
			Name string `json:"name"`
		}
		switch {
		case json.Unmarshal(tc, &s) == nil && s == "required":
			c.force = "*"
		case s == "none":
			c.noTools = true
		case json.Unmarshal(tc, &o) == nil && o.Name != "":
			c.force = o.Name
		}
	}
	return c, nil
}

// respIDs are the ids of one answer's response and output item.
type respIDs struct{ resp, item, call []byte }

func (x *reply) respIDs() respIDs {
	return respIDs{resp: x.appendID(nil, "resp_Mock"), item: x.appendID(nil, "msg_Mock"), call: x.appendID(nil, "call_Mock")}
}

// appendRespItem appends the output item of an answer: a message with one
// output_text part, or a function_call; done says whether it is complete
// (else it is in_progress with no content yet).
func appendRespItem(b []byte, id respIDs, text string, tl *tool, args []byte, done bool) []byte {
	status, content := "in_progress", ""
	if done {
		status = "completed"
	}
	if tl != nil {
		if done {
			content = string(args)
		}
		b = append(b, `{"id":"fc_`...)
		b = append(b, id.item[len("msg_"):]...)
		b = append(b, `","type":"function_call","status":"`...)
		b = append(b, status...)
		b = append(b, `","arguments":`...)
		b = json.AppendEscape(b, content, 0)
		b = append(b, `,"call_id":"`...)
		b = append(b, id.call...)
		b = append(b, `","name":`...)
		b = json.AppendEscape(b, tl.name, 0)
		return append(b, '}')
	}
	b = append(b, `{"id":"`...)
	b = append(b, id.item...)
	b = append(b, `","type":"message","status":"`...)
	b = append(b, status...)
	b = append(b, `","content":[`...)
	if done {
		b = appendRespText(b, text)
	}
	return append(b, `],"role":"assistant"}`...)
}

func appendRespText(b []byte, text string) []byte {
	b = append(b, `{"type":"output_text","annotations":[],"logprobs":[],"text":`...)
	b = json.AppendEscape(b, text, 0)
	return append(b, '}')
}

// appendRespObject appends a response object: in_progress with no output
// (for response.created), or completed with the answer and usage.
func (x *reply) appendRespObject(b []byte, id respIDs, text string, tl *tool, args []byte, done bool, out int) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, id.resp...)
	b = append(b, `","object":"response","created_at":`...)
	b = strconv.AppendInt(b, x.created(), 10)
	if done {
		b = append(b, `,"status":"completed","background":false,"completed_at":`...)
		b = strconv.AppendInt(b, x.created(), 10)
	} else {
		b = append(b, `,"status":"in_progress","background":false,"completed_at":null`...)
	}
	b = append(b, `,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"model":`...)
	b = json.AppendEscape(b, x.chat.model, 0)
	b = append(b, `,"output":[`...)
	if done {
		b = appendRespItem(b, id, text, tl, args, true)
	}
	b = append(b, `],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"service_tier":"default","store":true,"temperature":1.0,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":`...)
	if done {
		in := x.chat.inputTokens
		b = append(b, `{"input_tokens":`...)
		b = appendInt(b, in)
		b = append(b, `,"input_tokens_details":{"cached_tokens":0},"output_tokens":`...)
		b = appendInt(b, out)
		b = append(b, `,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":`...)
		b = appendInt(b, in+out)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	return append(b, `,"user":null,"metadata":{}}`...)
}

// responsesObject builds a non-streaming Responses API answer.
func (x *reply) responsesObject(text string, tl *tool) []byte {
	var args []byte
	out := countTokens(text)
	if tl != nil {
		args = toolArgs(tl)
		out = len(args)/4 + 1
	}
	return x.appendRespObject(make([]byte, 0, 1024), x.respIDs(), text, tl, args, true, out)
}

// responses writes a Responses API stream: response.created and
// .in_progress, the output item added (with its content part), one delta
// per word (or two argument deltas for a function call), the done events
// and response.completed, each with its sequence_number.
func (s *streamer) responses(text string, tl *tool) {
	x := s.x
	x.start()
	s.sw = sse.NewWriter(x.w)
	id := x.respIDs()
	var args []byte
	var pieces []string
	out := 0
	if tl != nil {
		args = toolArgs(tl)
		a := string(args)
		pieces = []string{a[:len(a)/2], a[len(a)/2:]}
		out = len(args)/4 + 1
	} else {
		pieces = tokens(text)
		out = len(pieces)
	}
	itemID := id.item
	if tl != nil {
		itemID = append([]byte("fc_"), id.item[len("msg_"):]...)
	}
	b := make([]byte, 0, 1024)
	ev := func(typ string, body func(b []byte) []byte) {
		b = append(b[:0], `{"type":"`...)
		b = append(b, typ...)
		b = append(b, `","sequence_number":`...)
		b = appendInt(b, s.seq)
		s.seq++
		b = body(b)
		b = append(b, '}')
		s.sw.Event(typ, b)
	}
	item := func(b []byte) []byte {
		b = append(b, `,"output_index":0,"item_id":"`...)
		b = append(b, itemID...)
		return append(b, '"')
	}
	ev("response.created", func(b []byte) []byte {
		return x.appendRespObject(append(b, `,"response":`...), id, "", nil, nil, false, 0)
	})
	ev("response.in_progress", func(b []byte) []byte {
		return x.appendRespObject(append(b, `,"response":`...), id, "", nil, nil, false, 0)
	})
	ev("response.output_item.added", func(b []byte) []byte {
		return appendRespItem(append(b, `,"output_index":0,"item":`...), id, "", tl, nil, false)
	})
	if tl == nil {
		ev("response.content_part.added", func(b []byte) []byte {
			return append(item(b), `,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`...)
		})
	}
	for _, p := range pieces {
		if !s.delta() {
			return
		}
		typ := "response.output_text.delta"
		if tl != nil {
			typ = "response.function_call_arguments.delta"
		}
		ev(typ, func(b []byte) []byte {
			b = item(b)
			if tl == nil {
				b = append(b, `,"content_index":0,"logprobs":[]`...)
			}
			b = append(b, `,"delta":`...)
			return json.AppendEscape(b, p, 0)
		})
	}
	if !s.delta() {
		return
	}
	if tl != nil {
		ev("response.function_call_arguments.done", func(b []byte) []byte {
			b = append(item(b), `,"arguments":`...)
			return json.AppendEscape(b, string(args), 0)
		})
	} else {
		ev("response.output_text.done", func(b []byte) []byte {
			b = append(item(b), `,"content_index":0,"logprobs":[],"text":`...)
			return json.AppendEscape(b, text, 0)
		})
		ev("response.content_part.done", func(b []byte) []byte {
			return appendRespText(append(item(b), `,"content_index":0,"part":`...), text)
		})
	}
	ev("response.output_item.done", func(b []byte) []byte {
		return appendRespItem(append(b, `,"output_index":0,"item":`...), id, text, tl, args, true)
	})
	ev("response.completed", func(b []byte) []byte {
		return x.appendRespObject(append(b, `,"response":`...), id, text, tl, args, true, out)
	})
}

// respStreamError is the error event a Responses stream fails with.
func (s *streamer) respStreamError() {
	b := append([]byte(`{"type":"error","sequence_number":`), strconv.Itoa(s.seq)...)
	b = append(b, `,"code":"server_error","message":"The server had an error while processing your request. Sorry about that!","param":null}`...)
	s.sw.Event("error", b)
}
