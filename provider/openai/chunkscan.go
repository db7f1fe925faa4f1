package openai

import (
	"github.com/llmguard/llmguard/internal/rawjson"
)

// This file reads a chat.completion.chunk in one pass over its bytes, into
// the wireResponse rawjson.Unmarshal would decode: a stream's events are
// small and many (a 1,000-token answer is 1,000 of them), and decoding each
// through the library's reflection was most of what relaying a stream
// cost. It reads the shapes streams carry; anything else (a field twice, a
// key in another case, content as an array of parts, a number that is not
// a plain integer) it leaves to rawjson.Unmarshal, whose result and errors
// stand. FuzzScanChunk checks that both read the same.

// chunkScan reads chunks into reused storage: what a scan returns is valid
// until the next scan.
type chunkScan struct {
	cur     rawjson.Cursor
	r, last wireResponse // the chunk read, and the one before
	choices []wireChoice
	calls   []wireToolCall
	usage   wireUsage
	// shape is the last chunk read whole around its one content string
	// (the text of choices[at]): the next, mostly the same but for its
	// text, reads with no walk.
	shape rawjson.Around
	at    int
	// texts counts the content strings the scan read, the last between
	// offsets from and to.
	texts, from, to int
}

// scan reads data into a wireResponse; false leaves data to
// rawjson.Unmarshal (it may be invalid, or unusual).
func (s *chunkScan) scan(data []byte) (*wireResponse, bool) {
	if t, ok := s.shape.Match(data); ok {
		s.choices[s.at].Delta.Content = flexText(t)
		return &s.r, true
	}
	s.last, s.r = s.r, wireResponse{}
	s.texts = 0
	c := &s.cur
	c.Reset(data)
	if c.Object() {
		for k := c.Field(topKeys); k >= 0; k = c.Field(topKeys) {
			switch r := &s.r; k {
			case 0:
				r.ID = c.Text(s.last.ID)
			case 1:
				r.Model = c.Text(s.last.Model)
			case 2:
				s.scanChoices()
			case 3:
				s.scanUsage()
			case 4:
				r.ServiceTier = c.Text(s.last.ServiceTier)
			case 5:
				r.Error = c.Raw()
			}
		}
	}
	if !c.Done() {
		s.shape.Forget()
		return &s.r, false
	}
	if s.texts == 1 {
		s.shape.Keep(data, s.from, s.to)
	} else {
		s.shape.Forget()
	}
	return &s.r, true
}

var (
	topKeys    = []string{"id", "model", "choices", "usage", "service_tier", "error"}
	choiceKeys = []string{"index", "message", "delta", "finish_reason"}
	deltaKeys  = []string{"content", "refusal", "tool_calls"}
	callKeys   = []string{"index", "id", "type", "function"}
	fnKeys     = []string{"name", "arguments"}
	usageKeys  = []string{"prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details"}
)

// scanChoices reads the choices array.
func (s *chunkScan) scanChoices() {
	c := &s.cur
	s.choices = s.choices[:0]
	if !c.Array() {
		return // null (or a failure)
	}
	for c.NextObject() { // a null element (a zero choice) is left to Unmarshal
		var ch wireChoice
		for k := c.Field(choiceKeys); k >= 0; k = c.Field(choiceKeys) {
			switch k {
			case 0:
				ch.Index = c.Int()
			case 1:
				c.Fail() // not a stream's
			case 2:
				s.scanDelta(&ch.Delta)
			case 3:
				ch.FinishReason = c.Text("")
			}
		}
		s.choices = append(s.choices, ch)
	}
	s.r.Choices = s.choices
}

// scanDelta reads the delta of a choice: content as a string, refusal, and
// tool-call fragments.
func (s *chunkScan) scanDelta(m *wireRespMsg) {
	c := &s.cur
	if !c.Object() {
		return
	}
	for k := c.Field(deltaKeys); k >= 0; k = c.Field(deltaKeys) {
		switch k {
		case 0:
			s.texts, s.at, s.from = s.texts+1, len(s.choices), c.Offset()
			m.Content = flexText(c.Text(""))
			s.to = c.Offset()
		case 1:
			m.Refusal = c.Text("")
		case 2:
			s.scanCalls()
			m.ToolCalls, s.calls = s.calls, nil
		}
	}
}

// scanCalls reads the tool_calls array of a delta into s.calls.
func (s *chunkScan) scanCalls() {
	c := &s.cur
	if !c.Array() {
		return
	}
	for c.NextObject() {
		var tc wireToolCall
		for k := c.Field(callKeys); k >= 0; k = c.Field(callKeys) {
			switch k {
			case 0:
				if !c.Null() {
					tc.Index = new(int)
					*tc.Index = c.Int()
				}
			case 1:
				tc.ID = c.Text("")
			case 2:
				tc.Type = c.Text("function")
			case 3:
				s.scanFunction(&tc)
			}
		}
		s.calls = append(s.calls, tc)
	}
}

// scanFunction reads a tool-call fragment's function.
func (s *chunkScan) scanFunction(tc *wireToolCall) {
	c := &s.cur
	if !c.Object() {
		return
	}
	for k := c.Field(fnKeys); k >= 0; k = c.Field(fnKeys) {
		if k == 0 {
			tc.Function.Name = c.Text("")
		} else {
			tc.Function.Arguments = c.Text("")
		}
	}
}

// scanUsage reads the usage object (null: none).
func (s *chunkScan) scanUsage() {
	c := &s.cur
	if !c.Object() {
		return
	}
	u := &s.usage
	*u = wireUsage{}
	s.r.Usage = u
	for k := c.Field(usageKeys); k >= 0; k = c.Field(usageKeys) {
		switch k {
		case 0:
			u.PromptTokens = c.Int()
		case 1:
			u.CompletionTokens = c.Int()
		case 2:
			count(c, cachedKey, &u.PromptDetails.CachedTokens)
		case 3:
			count(c, reasoningKey, &u.CompletionDetails.ReasoningTokens)
		}
	}
}

var cachedKey, reasoningKey = []string{"cached_tokens"}, []string{"reasoning_tokens"}

// count reads the one count of a usage details object that is read.
func count(c *rawjson.Cursor, key []string, n *int) {
	if !c.Object() {
		return
	}
	for c.Field(key) >= 0 {
		*n = c.Int()
	}
}
