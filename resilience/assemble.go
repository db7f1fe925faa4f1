package resilience

import (
	"encoding/json"
	"strings"

	"github.com/llmguard/llmguard/provider"
)

// maxAnswer bounds an answer assembled from a stream, as the adapters bound
// a non-streaming body.
const maxAnswer = 32 << 20

// assembler builds the Response a non-streaming call returns from a
// stream's chunks: text, tool calls, thinking blocks, finish reason, stop
// sequence, usage, ids. The zero value is not usable; see newAssembler.
type assembler struct {
	resp     provider.Response
	text     strings.Builder
	tools    map[int]int // tool call index -> position in resp.ToolCalls
	thinking []*thinkingBlock
	size     int // bytes of content taken, against maxAnswer
	// final: usage arrived with or after the finish reason, so the answer
	// is complete even if the stream's terminator never comes.
	final bool
}

// thinkingBlock is one thinking block being assembled.
type thinkingBlock struct {
	index int
	typ   string
	text  strings.Builder
	sig   strings.Builder
	data  string
}

func newAssembler(t *targetPlan) *assembler {
	return &assembler{resp: provider.Response{Provider: t.provider, Model: t.model}}
}

// add takes one chunk. It reports false when the answer grew beyond
// maxAnswer.
func (a *assembler) add(c *provider.Chunk) bool {
	if c.Model != "" {
		a.resp.Model = c.Model
	}
	if c.ID != "" {
		a.resp.ID = c.ID
	}
	if c.Dropped != nil {
		a.resp.Dropped = c.Dropped
	}
	a.size += len(c.Text)
	a.text.WriteString(c.Text)
	if d := c.ToolCall; d != nil {
		a.size += len(d.Arguments)
		a.tool(d)
	}
	if d := c.Thinking; d != nil {
		a.size += len(d.Thinking) + len(d.Signature) + len(d.Data)
		a.think(d)
	}
	if c.FinishReason != "" {
		a.resp.FinishReason = c.FinishReason
	}
	if c.StopSequence != "" {
		a.resp.StopSequence = c.StopSequence
	}
	if c.Usage != nil {
		a.resp.Usage.Merge(*c.Usage)
		if a.resp.FinishReason != "" {
			a.final = true
		}
	}
	return a.size <= maxAnswer
}

func (a *assembler) tool(d *provider.ToolCallDelta) {
	if a.tools == nil {
		a.tools = make(map[int]int)
	}
	i, ok := a.tools[d.Index]
	if !ok {
		i = len(a.resp.ToolCalls)
		a.tools[d.Index] = i
		a.resp.ToolCalls = append(a.resp.ToolCalls, provider.ToolCall{})
	}
	tc := &a.resp.ToolCalls[i]
	if d.ID != "" {
		tc.ID = d.ID
	}
	if d.Name != "" {
		tc.Name = d.Name
	}
	if d.Extra != nil {
		tc.Extra = d.Extra
	}
	tc.Arguments = append(tc.Arguments, d.Arguments...)
}

func (a *assembler) think(d *provider.ThinkingDelta) {
	var b *thinkingBlock
	for _, x := range a.thinking {
		if x.index == d.Index {
			b = x
			break
		}
	}
	if b == nil {
		b = &thinkingBlock{index: d.Index, typ: provider.PartThinking}
		a.thinking = append(a.thinking, b)
	}
	if d.Type != "" {
		b.typ = d.Type
	}
	b.text.WriteString(d.Thinking)
	b.sig.WriteString(d.Signature)
	if d.Data != "" {
		b.data = d.Data
	}
}

// response is the assembled answer, with the stream's request id.
func (a *assembler) response(requestID string) *provider.Response {
	r := a.resp
	r.Text = a.text.String()
	r.RequestID = requestID
	for i := range r.ToolCalls {
		if len(r.ToolCalls[i].Arguments) == 0 {
			r.ToolCalls[i].Arguments = json.RawMessage("{}") // as a non-streaming answer has it
		}
	}
	for _, b := range a.thinking {
		r.Thinking = append(r.Thinking, b.part())
	}
	return &r
}

// part is the block as Response.Thinking holds it: its fields verbatim in
// Extra, as a non-streaming answer decodes them.
func (b *thinkingBlock) part() provider.Part {
	str := func(s string) json.RawMessage {
		raw, _ := json.Marshal(s) // a string always marshals
		return raw
	}
	if b.typ == provider.PartRedactedThinking {
		return provider.Part{Type: b.typ, Extra: map[string]json.RawMessage{"data": str(b.data)}}
	}
	return provider.Part{Type: b.typ, Extra: map[string]json.RawMessage{"thinking": str(b.text.String()), "signature": str(b.sig.String())}}
}
