package openai

import (
	"github.com/llmguard/llmguard/internal/rawjson"
)

// unmarshal decodes a chat.completion or chat.completion.chunk body into r
// without reflection: only the fields the adapter reads are decoded, the
// rest is skipped. It rejects what json.Unmarshal would reject for these
// fields, except that keys match exactly (encoding/json also accepts
// case-insensitive matches, which no OpenAI-compatible server sends).
func unmarshal(body []byte, r *wireResponse) error {
	// One pass checks the syntax and reads the fields. When it fails, a body
	// that is not JSON gets encoding/json's syntax error, whichever error the
	// walk met first, as if the body had been checked before the walk.
	err := rawjson.EachFieldValid(body, func(k, v []byte) (err error) {
		switch string(k) {
		case "id":
			r.ID, err = rawjson.String(v)
		case "model":
			r.Model, err = rawjson.String(v)
		case "choices":
			r.Choices = r.Choices[:0]
			err = rawjson.EachElement(v, func(e []byte) error {
				r.Choices = append(r.Choices, wireChoice{})
				return unmarshalChoice(e, &r.Choices[len(r.Choices)-1])
			})
		case "usage":
			if rawjson.IsNull(v) {
				r.Usage = nil
			} else {
				if r.Usage == nil { // a repeated key merges, as in encoding/json
					r.Usage = &wireUsage{}
				}
				err = rawjson.EachField(v, func(k, v []byte) (err error) {
					switch string(k) {
					case "prompt_tokens":
						r.Usage.PromptTokens, err = rawjson.Int(v)
					case "completion_tokens":
						r.Usage.CompletionTokens, err = rawjson.Int(v)
					case "prompt_tokens_details":
						err = detail(v, "cached_tokens", &r.Usage.PromptDetails.CachedTokens)
					case "completion_tokens_details":
						err = detail(v, "reasoning_tokens", &r.Usage.CompletionDetails.ReasoningTokens)
					}
					return err
				})
			}
		case "error":
			r.Error = v
		case "service_tier":
			r.ServiceTier, err = rawjson.String(v)
		}
		return err
	})
	if err != nil && !rawjson.Valid(body) {
		var v any
		if err := rawjson.Unmarshal(body, &v); err != nil {
			return err // the same syntax error encoding/json reports
		}
		return rawjson.ErrMalformed
	}
	return err
}

func unmarshalChoice(b []byte, c *wireChoice) error {
	return rawjson.EachField(b, func(k, v []byte) (err error) {
		switch string(k) {
		case "index":
			c.Index, err = rawjson.Int(v)
		case "message":
			err = unmarshalMsg(v, &c.Message)
		case "delta":
			err = unmarshalMsg(v, &c.Delta)
		case "finish_reason":
			c.FinishReason, err = rawjson.String(v)
		}
		return err
	})
}

func unmarshalMsg(b []byte, m *wireRespMsg) error {
	return rawjson.EachField(b, func(k, v []byte) (err error) {
		switch string(k) {
		case "content":
			err = m.Content.UnmarshalJSON(v)
		case "refusal":
			m.Refusal, err = rawjson.String(v)
		case "tool_calls":
			m.ToolCalls = m.ToolCalls[:0]
			err = rawjson.EachElement(v, func(e []byte) error {
				m.ToolCalls = append(m.ToolCalls, wireToolCall{})
				return unmarshalToolCall(e, &m.ToolCalls[len(m.ToolCalls)-1])
			})
		}
		return err
	})
}

func unmarshalToolCall(b []byte, tc *wireToolCall) error {
	return rawjson.EachField(b, func(k, v []byte) (err error) {
		switch string(k) {
		case "index":
			tc.Index = nil
			if !rawjson.IsNull(v) {
				n, ierr := rawjson.Int(v)
				tc.Index, err = &n, ierr
			}
		case "id":
			tc.ID, err = rawjson.String(v)
		case "type":
			tc.Type, err = rawjson.String(v)
		case "function":
			err = rawjson.EachField(v, func(k, v []byte) (err error) {
				switch string(k) {
				case "name":
					tc.Function.Name, err = rawjson.String(v)
				case "arguments":
					tc.Function.Arguments, err = rawjson.String(v)
				}
				return err
			})
		}
		return err
	})
}

// detail reads the integer key of a usage details object into n, as
// encoding/json does (null leaves n alone).
func detail(obj []byte, key string, n *int) error {
	return rawjson.EachField(obj, func(k, v []byte) (err error) {
		if string(k) == key && !rawjson.IsNull(v) {
			*n, err = rawjson.Int(v)
		}
		return err
	})
}
