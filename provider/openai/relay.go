package openai

import (
	"strconv"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// completionLog rebuilds, from the chunks of a relayed request's stream,
// the chat.completion the API returns to the same request without
// streaming (as the SDKs' finalChatCompletion does): the chunks' id,
// created, model, service tier and system fingerprint; per choice the
// message (role, content, refusal, tool calls, annotations), its logprobs
// and finish reason; the usage chunk.
type completionLog struct {
	id, model           string
	created, tier, fp   json.RawMessage
	choices             []*choiceLog
	usage               json.RawMessage
	finished, truncated bool
}

// maxChoices and maxToolCalls bound what a log keeps.
const (
	maxChoices   = 128
	maxToolCalls = 1024
)

type choiceLog struct {
	index              int
	role               string
	content, refusal   strings.Builder
	hasContent, hasRef bool
	tools              []*toolLog
	annotations        []json.RawMessage
	logprobs, lpRefuse []json.RawMessage
	hasLogprobs        bool
	finish             json.RawMessage
}

type toolLog struct {
	index   int
	id, typ string
	name    string
	args    strings.Builder
}

// add records one chunk's data.
func (l *completionLog) add(data []byte) {
	var c struct {
		ID                string          `json:"id"`
		Model             string          `json:"model"`
		Created           json.RawMessage `json:"created"`
		ServiceTier       json.RawMessage `json:"service_tier"`
		SystemFingerprint json.RawMessage `json:"system_fingerprint"`
		Choices           []struct {
			Index int `json:"index"`
			Delta struct {
				Role      string  `json:"role"`
				Content   *string `json:"content"`
				Refusal   *string `json:"refusal"`
				ToolCalls []struct {
					Index    int    `json:"index"`
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
				Annotations []json.RawMessage `json:"annotations"`
			} `json:"delta"`
			Logprobs *struct {
				Content []json.RawMessage `json:"content"`
				Refusal []json.RawMessage `json:"refusal"`
			} `json:"logprobs"`
			FinishReason json.RawMessage `json:"finish_reason"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if rawjson.Unmarshal(data, &c) != nil {
		return
	}
	set := func(dst *json.RawMessage, v json.RawMessage) {
		if len(v) > 0 && !rawjson.IsNull(v) {
			*dst = v
		}
	}
	if c.ID != "" {
		l.id = c.ID
	}
	if c.Model != "" {
		l.model = c.Model
	}
	set(&l.created, c.Created)
	set(&l.tier, c.ServiceTier)
	set(&l.fp, c.SystemFingerprint)
	set(&l.usage, c.Usage)
	for _, ch := range c.Choices {
		cl := l.choice(ch.Index)
		if cl == nil {
			continue
		}
		d := &ch.Delta
		if d.Role != "" {
			cl.role = d.Role
		}
		if d.Content != nil {
			cl.content.WriteString(*d.Content)
			cl.hasContent = cl.hasContent || *d.Content != ""
		}
		if d.Refusal != nil {
			cl.refusal.WriteString(*d.Refusal)
			cl.hasRef = cl.hasRef || *d.Refusal != ""
		}
		for _, tc := range d.ToolCalls {
			t := cl.tool(tc.Index)
			if t == nil {
				l.truncated = true
				continue
			}
			if tc.ID != "" {
				t.id = tc.ID
			}
			if tc.Type != "" {
				t.typ = tc.Type
			}
			if tc.Function.Name != "" {
				t.name = tc.Function.Name
			}
			t.args.WriteString(tc.Function.Arguments)
		}
		cl.annotations = append(cl.annotations, d.Annotations...)
		if lp := ch.Logprobs; lp != nil {
			cl.hasLogprobs = true
			cl.logprobs = append(cl.logprobs, lp.Content...)
			cl.lpRefuse = append(cl.lpRefuse, lp.Refusal...)
		}
		if len(ch.FinishReason) > 0 && !rawjson.IsNull(ch.FinishReason) {
			cl.finish = ch.FinishReason
			l.finished = true
		}
	}
}

func (l *completionLog) choice(index int) *choiceLog {
	c := httpcall.Indexed(&l.choices, index, maxChoices, func(c *choiceLog) int { return c.index },
		func(i int) *choiceLog { return &choiceLog{index: i} })
	if c == nil {
		l.truncated = true
	}
	return c
}

func (c *choiceLog) tool(index int) *toolLog {
	return httpcall.Indexed(&c.tools, index, maxToolCalls, func(t *toolLog) int { return t.index },
		func(i int) *toolLog { return &toolLog{index: i} })
}

// RawAnswer implements provider.RawAnswerer: the rebuilt chat.completion,
// once a finish reason has come; nil before.
func (l *completionLog) RawAnswer() json.RawMessage {
	if l == nil || !l.finished || l.truncated {
		return nil
	}
	b := []byte(`{"id":`)
	b = json.AppendEscape(b, l.id, 0)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = appendOr(b, l.created, "0")
	b = append(b, `,"model":`...)
	b = json.AppendEscape(b, l.model, 0)
	b = append(b, `,"choices":[`...)
	for i, c := range l.choices {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.appendTo(b)
	}
	b = append(b, ']')
	if len(l.usage) > 0 {
		b = append(b, `,"usage":`...)
		b = append(b, l.usage...)
	}
	if len(l.tier) > 0 {
		b = append(b, `,"service_tier":`...)
		b = append(b, l.tier...)
	}
	if len(l.fp) > 0 {
		b = append(b, `,"system_fingerprint":`...)
		b = append(b, l.fp...)
	}
	return append(b, '}')
}

func (c *choiceLog) appendTo(b []byte) []byte {
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(c.index), 10)
	b = append(b, `,"message":{"role":`...)
	role := c.role
	if role == "" {
		role = "assistant"
	}
	b = json.AppendEscape(b, role, 0)
	b = append(b, `,"content":`...)
	b = strOrNull(b, &c.content, c.hasContent)
	b = append(b, `,"refusal":`...)
	b = strOrNull(b, &c.refusal, c.hasRef)
	if len(c.tools) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, t := range c.tools {
			if i > 0 {
				b = append(b, ',')
			}
			typ := t.typ
			if typ == "" {
				typ = "function"
			}
			b = append(b, `{"id":`...)
			b = json.AppendEscape(b, t.id, 0)
			b = append(b, `,"type":`...)
			b = json.AppendEscape(b, typ, 0)
			b = append(b, `,"function":{"name":`...)
			b = json.AppendEscape(b, t.name, 0)
			b = append(b, `,"arguments":`...)
			b = json.AppendEscape(b, t.args.String(), 0)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	if len(c.annotations) > 0 {
		b = append(b, `,"annotations":`...)
		b = appendArray(b, c.annotations)
	}
	b = append(b, `},"logprobs":`...)
	if c.hasLogprobs {
		b = append(b, `{"content":`...)
		b = appendArrayOrNull(b, c.logprobs)
		b = append(b, `,"refusal":`...)
		b = appendArrayOrNull(b, c.lpRefuse)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"finish_reason":`...)
	b = appendOr(b, c.finish, "null")
	return append(b, '}')
}

func strOrNull(b []byte, s *strings.Builder, has bool) []byte {
	if !has {
		return append(b, "null"...)
	}
	return json.AppendEscape(b, s.String(), 0)
}

func appendOr(b []byte, v json.RawMessage, def string) []byte {
	if len(v) == 0 {
		return append(b, def...)
	}
	return append(b, v...)
}

// appendArrayOrNull appends elems as an array, or null when there are none
// (as the API says of logprobs it has none of).
func appendArrayOrNull(b []byte, elems []json.RawMessage) []byte {
	if len(elems) == 0 {
		return append(b, "null"...)
	}
	return appendArray(b, elems)
}

func appendArray(b []byte, elems []json.RawMessage) []byte {
	b = append(b, '[')
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
}
