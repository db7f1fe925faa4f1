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
// until the next scan. (What its reads fill lives here too: a read's
// closure that captured a local would move it to the heap, once a read.)
type chunkScan struct {
	r, last wireResponse // the chunk read, and the one before
	choices []wireChoice
	c       wireChoice // the choice being read
	tc      wireToolCall
	calls   []wireToolCall
	usage   wireUsage
}

// scan reads data into a wireResponse; false leaves data to
// rawjson.Unmarshal (it may be invalid, or unusual).
func (s *chunkScan) scan(data []byte) (*wireResponse, bool) {
	s.last, s.r = s.r, wireResponse{}
	ok := rawjson.ReadFields(data, true, topKeys, func(k string, v []byte) (ok bool) {
		switch r := &s.r; k {
		case "id":
			r.ID, ok = rawjson.Text(v, s.last.ID)
		case "model":
			r.Model, ok = rawjson.Text(v, s.last.Model)
		case "choices":
			ok = s.scanChoices(v)
		case "usage":
			ok = s.scanUsage(v)
		case "service_tier":
			r.ServiceTier, ok = rawjson.Text(v, s.last.ServiceTier)
		case "error":
			r.Error, ok = v, true
		}
		return ok
	})
	return &s.r, ok
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
func (s *chunkScan) scanChoices(v []byte) bool {
	s.choices, s.c = s.choices[:0], wireChoice{}
	ok := rawjson.ReadObjects(v, choiceKeys, func(k string, v []byte) (ok bool) {
		switch k {
		case "index":
			s.c.Index, ok = integer(v)
		case "delta":
			ok = s.scanDelta(v)
		case "finish_reason":
			s.c.FinishReason, ok = rawjson.Text(v, finishName(v))
		}
		return ok // false for "message": not a stream's
	}, func() bool {
		s.choices, s.c = append(s.choices, s.c), wireChoice{}
		return true
	})
	if !rawjson.IsNull(v) {
		s.r.Choices = s.choices
	}
	return ok
}

// finishName is the finish reason v spells when it is a common one, so
// that reading it allocates nothing.
func finishName(v []byte) string {
	switch string(v) {
	case `"stop"`:
		return "stop"
	case `"length"`:
		return "length"
	case `"tool_calls"`:
		return "tool_calls"
	}
	return ""
}

// scanDelta reads the delta of the choice being read: content as a
// string, refusal, and tool-call fragments.
func (s *chunkScan) scanDelta(v []byte) bool {
	return rawjson.ReadFields(v, false, deltaKeys, func(k string, v []byte) (ok bool) {
		switch m := &s.c.Delta; k {
		case "content":
			var t string
			t, ok = rawjson.Text(v, "")
			m.Content = flexText(t)
		case "refusal":
			m.Refusal, ok = rawjson.Text(v, "")
		case "tool_calls":
			ok = s.scanCalls(v)
			m.ToolCalls, s.calls = s.calls, nil
		}
		return ok
	})
}

// scanCalls reads the tool_calls array of a delta into s.calls.
func (s *chunkScan) scanCalls(v []byte) bool {
	s.tc = wireToolCall{}
	return rawjson.ReadObjects(v, callKeys, func(k string, v []byte) (ok bool) {
		switch tc := &s.tc; k {
		case "index":
			ok = true
			if !rawjson.IsNull(v) {
				tc.Index = new(int)
				*tc.Index, ok = integer(v)
			}
		case "id":
			tc.ID, ok = rawjson.Text(v, "")
		case "type":
			tc.Type, ok = rawjson.Text(v, "function")
		case "function":
			ok = rawjson.ReadFields(v, false, fnKeys, func(k string, v []byte) (ok bool) {
				if k == "name" {
					tc.Function.Name, ok = rawjson.Text(v, "")
				} else {
					tc.Function.Arguments, ok = rawjson.Text(v, "")
				}
				return ok
			})
		}
		return ok
	}, func() bool {
		s.calls, s.tc = append(s.calls, s.tc), wireToolCall{}
		return true
	})
}

// scanUsage reads the usage object (null: none).
func (s *chunkScan) scanUsage(v []byte) bool {
	if rawjson.IsNull(v) {
		return true
	}
	u := &s.usage
	*u = wireUsage{}
	s.r.Usage = u
	return rawjson.ReadFields(v, false, usageKeys, func(k string, v []byte) (ok bool) {
		switch k {
		case "prompt_tokens":
			u.PromptTokens, ok = integer(v)
		case "completion_tokens":
			u.CompletionTokens, ok = integer(v)
		case "prompt_tokens_details":
			ok = count(v, "cached_tokens", &u.PromptDetails.CachedTokens)
		case "completion_tokens_details":
			ok = count(v, "reasoning_tokens", &u.CompletionDetails.ReasoningTokens)
		}
		return ok
	})
}

// count reads the one count of a usage details object that is read.
func count(v []byte, name string, n *int) bool {
	return rawjson.ReadFields(v, false, []string{name}, func(_ string, v []byte) (ok bool) {
		*n, ok = integer(v)
		return ok
	})
}

// integer decodes a JSON integer that fits an int, or null (0).
func integer(v []byte) (int, bool) {
	n, err := rawjson.Int(v)
	return n, err == nil
}
