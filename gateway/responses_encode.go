package gateway

import (
	"strconv"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// This file writes canonical answers as Responses API objects and typed
// stream events, in the shapes the official SDKs check (the openai package's
// stream accumulator rejects an item id, output_index or content_index that
// does not match what came before). A relayed answer is never re-encoded:
// the upstream's body and events go out verbatim.

// echoKeys are the request fields a response object repeats, in the order
// OpenAI writes them, each with its value when the request lacks it. store
// says whether the gateway kept the answer's output items (for a later
// item_reference; the response itself is never kept, so previous_response_id
// can't continue it).
var echoKeys = []struct{ key, def string }{
	{"instructions", "null"},
	{"max_output_tokens", "null"},
	{"model", ""}, // the answering model, not the request's
	{"output", ""},
	{"parallel_tool_calls", "true"},
	{"previous_response_id", "null"},
	{"reasoning", `{"effort":null,"summary":null}`},
	{"store", "false"},
	{"temperature", "1.0"},
	{"text", `{"format":{"type":"text"},"verbosity":"medium"}`},
	{"tool_choice", `"auto"`},
	{"tools", "[]"},
	{"top_p", "1.0"},
	{"truncation", `"disabled"`},
	{"usage", ""},
	{"user", "null"},
	{"metadata", "{}"},
}

// rsEcho is the request's fields a response object repeats.
type rsEcho map[string]json.RawMessage

func echoOf(in *inbound) rsEcho {
	e := rsEcho{}
	if p := in.req.Passthrough; p != nil {
		_ = rawjson.EachField(p.Body, func(k, v []byte) error {
			switch string(k) {
			case "instructions", "max_output_tokens", "parallel_tool_calls", "reasoning", "temperature",
				"text", "tool_choice", "tools", "top_p", "truncation", "user", "metadata":
				if !rawjson.IsNull(v) {
					e[string(k)] = v
				}
			}
			return nil
		})
	}
	return e
}

// rsItem is one output item of a translated answer.
type rsItem struct {
	id     string
	call   bool   // a function_call (else a message)
	callID string // function_call
	name   string
	text   strings.Builder // a message's text or a call's arguments
	tool   int             // the canonical tool-call index of a call
}

// rsAnswer is what a response object says: its id, status, items, usage.
type rsAnswer struct {
	id, model string
	created   int64
	echo      rsEcho
	items     []*rsItem
	finish    string
	usage     provider.Usage
	kept      bool // the items go to the item store
}

func newItemID(prefix string) string { return prefix + randText() }

// answerOf builds the items of a canonical non-streaming response.
func answerOf(resp *provider.Response, id string, created int64, echo rsEcho) *rsAnswer {
	a := &rsAnswer{id: id, model: resp.Model, created: created, echo: echo, finish: resp.FinishReason, usage: resp.Usage}
	if resp.Text != "" || len(resp.ToolCalls) == 0 {
		it := &rsItem{id: newItemID("msg_")}
		it.text.WriteString(resp.Text)
		a.items = append(a.items, it)
	}
	for i, tc := range resp.ToolCalls {
		it := &rsItem{id: newItemID("fc_"), call: true, callID: tc.ID, name: tc.Name, tool: i}
		if it.callID == "" {
			it.callID = newItemID("call_")
		}
		it.text.WriteString(argsString(tc.Arguments))
		a.items = append(a.items, it)
	}
	return a
}

// argsString is a canonical arguments object as the Responses API's
// arguments string (a JSON string argument stays that string).
func argsString(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '"' {
		if s, err := rawjson.String(raw); err == nil {
			return s
		}
	}
	if len(raw) == 0 {
		return "{}"
	}
	return string(raw)
}

// status is the response's status and incomplete_details.
func (a *rsAnswer) status() (string, string) {
	switch a.finish {
	case provider.FinishLength:
		return "incomplete", `{"reason":"max_output_tokens"}`
	case provider.FinishFiltered:
		return "incomplete", `{"reason":"content_filter"}`
	}
	return "completed", "null"
}

// appendItem appends an output item, complete or (done false) as added.
func appendItem(b []byte, it *rsItem, done bool) []byte {
	status := "in_progress"
	if done {
		status = "completed"
	}
	b = append(b, `{"id":`...)
	b = json.AppendEscape(b, it.id, 0)
	if it.call {
		b = append(b, `,"type":"function_call","status":"`...)
		b = append(b, status...)
		b = append(b, `","arguments":`...)
		if done {
			b = json.AppendEscape(b, it.text.String(), 0)
		} else {
			b = append(b, `""`...)
		}
		b = append(b, `,"call_id":`...)
		b = json.AppendEscape(b, it.callID, 0)
		b = append(b, `,"name":`...)
		b = json.AppendEscape(b, it.name, 0)
		return append(b, '}')
	}
	b = append(b, `,"type":"message","status":"`...)
	b = append(b, status...)
	b = append(b, `","content":[`...)
	if done {
		b = appendTextPart(b, it.text.String())
	}
	return append(b, `],"role":"assistant"}`...)
}

func appendTextPart(b []byte, text string) []byte {
	b = append(b, `{"type":"output_text","annotations":[],"logprobs":[],"text":`...)
	b = json.AppendEscape(b, text, 0)
	return append(b, '}')
}

// appendObject appends the response object; done false is the in_progress
// object of response.created (no output, no usage).
func (a *rsAnswer) appendObject(b []byte, done bool) []byte {
	status, incomplete := "in_progress", "null"
	if done {
		status, incomplete = a.status()
	}
	b = append(b, `{"id":`...)
	b = json.AppendEscape(b, a.id, 0)
	b = append(b, `,"object":"response","created_at":`...)
	b = strconv.AppendInt(b, a.created, 10)
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","background":false,"error":null,"incomplete_details":`...)
	b = append(b, incomplete...)
	for _, k := range echoKeys {
		b = append(b, ',', '"')
		b = append(b, k.key...)
		b = append(b, '"', ':')
		switch k.key {
		case "model":
			b = json.AppendEscape(b, a.model, 0)
		case "output":
			b = append(b, '[')
			if done {
				for i, it := range a.items {
					if i > 0 {
						b = append(b, ',')
					}
					b = appendItem(b, it, true)
				}
			}
			b = append(b, ']')
		case "usage":
			if !done {
				b = append(b, "null"...)
				continue
			}
			u := a.usage
			b = append(b, `{"input_tokens":`...)
			b = appendInt(b, u.InputTokens)
			b = append(b, `,"input_tokens_details":{"cached_tokens":0},"output_tokens":`...)
			b = appendInt(b, u.OutputTokens)
			b = append(b, `,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":`...)
			b = appendInt(b, u.InputTokens+u.OutputTokens)
			b = append(b, '}')
		case "store":
			b = strconv.AppendBool(b, a.kept)
		default:
			if v, ok := a.echo[k.key]; ok {
				b = append(b, v...)
			} else {
				b = append(b, k.def...)
			}
		}
	}
	return append(b, '}')
}
