package openai

import (
	"bytes"
	"errors"
	"strconv"

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

// errUnusual ends a scan that leaves the event to rawjson.Unmarshal.
var errUnusual = errors.New("openai: unusual chunk")

// chunkScan reads chunks into reused storage: what a scan returns is valid
// until the next scan.
type chunkScan struct {
	r       wireResponse
	choices []wireChoice
	usage   wireUsage
}

// scan reads data into a wireResponse; false leaves data to
// rawjson.Unmarshal (it may be invalid, or unusual).
func (s *chunkScan) scan(data []byte) (*wireResponse, bool) {
	prev := s.r
	s.r = wireResponse{}
	r := &s.r
	ok := fields(data, true, topKeys, func(k string, v []byte) (ok bool) {
		switch k {
		case "id":
			r.ID, ok = text(v, prev.ID)
		case "model":
			r.Model, ok = text(v, prev.Model)
		case "choices":
			ok = s.scanChoices(v)
		case "usage":
			ok = s.scanUsage(v)
		case "service_tier":
			r.ServiceTier, ok = text(v, prev.ServiceTier)
		case "error":
			r.Error, ok = v, true
		}
		return ok
	})
	return r, ok
}

var (
	topKeys    = []string{"id", "model", "choices", "usage", "service_tier", "error"}
	choiceKeys = []string{"index", "message", "delta", "finish_reason"}
	deltaKeys  = []string{"content", "refusal", "tool_calls"}
	callKeys   = []string{"index", "id", "type", "function"}
	fnKeys     = []string{"name", "arguments"}
	usageKeys  = []string{"prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details"}
)

// fields walks the JSON object v (null: no fields; with valid, checking
// that v is valid JSON), calling read with each of the known keys it has
// and the key's value: false if read is, if a known key comes twice, or if
// a key would match a known one regardless of case, as the library
// matches keys (or, not ASCII, by Unicode folding).
func fields(v []byte, valid bool, known []string, read func(k string, v []byte) bool) bool {
	var seen uint8
	fn := func(k, v []byte) error {
		for i, name := range known {
			if string(k) == name {
				if seen&(1<<i) != 0 || !read(name, v) {
					return errUnusual
				}
				seen |= 1 << i
				return nil
			}
		}
		for _, c := range k {
			if c >= 0x80 {
				return errUnusual
			}
		}
		for _, name := range known {
			if len(name) == len(k) && bytes.EqualFold(k, []byte(name)) {
				return errUnusual
			}
		}
		return nil
	}
	if valid {
		return rawjson.EachFieldValid(v, fn) == nil
	}
	return rawjson.EachField(v, fn) == nil
}

// objects calls read with each element of the JSON array v (null: none):
// false if an element is not an object or read is false.
func objects(v []byte, read func(elem []byte) bool) bool {
	return rawjson.EachElement(v, func(e []byte) error {
		if e[0] != '{' || !read(e) {
			return errUnusual
		}
		return nil
	}) == nil
}

// scanChoices reads the choices array.
func (s *chunkScan) scanChoices(v []byte) bool {
	cs := s.choices[:0]
	ok := objects(v, func(e []byte) bool {
		var c wireChoice
		ok := fields(e, false, choiceKeys, func(k string, v []byte) (ok bool) {
			switch k {
			case "index":
				c.Index, ok = integer(v)
			case "delta":
				ok = scanDelta(v, &c.Delta)
			case "finish_reason":
				c.FinishReason, ok = text(v, finishName(v))
			}
			return ok // false for "message": not a stream's
		})
		cs = append(cs, c)
		return ok
	})
	s.choices = cs
	if !rawjson.IsNull(v) {
		s.r.Choices = cs
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

// scanDelta reads a choice's delta: content as a string, refusal, and
// tool-call fragments.
func scanDelta(v []byte, m *wireRespMsg) bool {
	return fields(v, false, deltaKeys, func(k string, v []byte) (ok bool) {
		switch k {
		case "content":
			var t string
			t, ok = text(v, "")
			m.Content = flexText(t)
		case "refusal":
			m.Refusal, ok = text(v, "")
		case "tool_calls":
			m.ToolCalls, ok = scanCalls(v)
		}
		return ok
	})
}

// scanCalls reads the tool_calls array of a delta.
func scanCalls(v []byte) ([]wireToolCall, bool) {
	var calls []wireToolCall
	ok := objects(v, func(e []byte) bool {
		var tc wireToolCall
		ok := fields(e, false, callKeys, func(k string, v []byte) (ok bool) {
			switch k {
			case "index":
				ok = true
				if !rawjson.IsNull(v) {
					tc.Index = new(int)
					*tc.Index, ok = integer(v)
				}
			case "id":
				tc.ID, ok = text(v, "")
			case "type":
				tc.Type, ok = text(v, "function")
			case "function":
				ok = fields(v, false, fnKeys, func(k string, v []byte) (ok bool) {
					if k == "name" {
						tc.Function.Name, ok = text(v, "")
					} else {
						tc.Function.Arguments, ok = text(v, "")
					}
					return ok
				})
			}
			return ok
		})
		calls = append(calls, tc)
		return ok
	})
	return calls, ok
}

// scanUsage reads the usage object (null: none).
func (s *chunkScan) scanUsage(v []byte) bool {
	if rawjson.IsNull(v) {
		return true
	}
	u := &s.usage
	*u = wireUsage{}
	s.r.Usage = u
	return fields(v, false, usageKeys, func(k string, v []byte) (ok bool) {
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
	return fields(v, false, []string{name}, func(_ string, v []byte) (ok bool) {
		*n, ok = integer(v)
		return ok
	})
}

// text decodes a JSON string or null (""); the string is last, allocating
// nothing, when v spells it without escapes.
func text(v []byte, last string) (string, bool) {
	switch {
	case v[0] == 'n':
		return "", true // valid JSON: null
	case v[0] != '"':
		return "", false
	}
	if in := v[1 : len(v)-1]; string(in) == last && bytes.IndexByte(in, '\\') < 0 {
		return last, true
	}
	s, err := rawjson.String(v)
	return s, err == nil
}

// integer decodes a JSON integer that fits an int, or null (0).
func integer(v []byte) (int, bool) {
	if v[0] == 'n' {
		return 0, true
	}
	n, err := strconv.Atoi(string(v))
	return n, err == nil
}
