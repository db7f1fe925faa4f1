package mock

import (
	"strconv"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/sse"
)

func (x *reply) created() int64 { return x.s.now().Unix() }

func (x *reply) appendUsage(b []byte, out int) []byte {
	in := x.chat.inputTokens
	b = append(b, `{"prompt_tokens":`...)
	b = appendInt(b, in)
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, out)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, in+out)
	return append(b, `,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`...)
}

func (x *reply) appendToolCall(b []byte, tl *tool, args []byte) []byte {
	b = append(b, `{"id":"`...)
	b = x.appendID(b, "call_Mock")
	b = append(b, `","type":"function","function":{"name":`...)
	b = json.AppendEscape(b, tl.name, 0)
	b = append(b, `,"arguments":`...)
	b = json.AppendEscape(b, string(args), 0)
	return append(b, "}}"...)
}

// openaiCompletion builds a Chat Completions response.
func (x *reply) openaiCompletion(text string, tl *tool) []byte {
	b := make([]byte, 0, 768)
	b = append(b, `{"id":"`...)
	b = x.appendID(b, "chatcmpl-Mock")
	b = append(b, `","object":"chat.completion","created":`...)
	b = strconv.AppendInt(b, x.created(), 10)
	b = append(b, `,"model":`...)
	b = json.AppendEscape(b, x.chat.model, 0)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant",`...)
	out, finish := 0, "stop"
	if tl != nil {
		args := toolArgs(tl)
		b = append(b, `"content":null,"tool_calls":[`...)
		b = x.appendToolCall(b, tl, args)
		b = append(b, `],"refusal":null,"annotations":[]}`...)
		out, finish = len(args)/4+1, "tool_calls"
	} else {
		b = append(b, `"content":`...)
		b = json.AppendEscape(b, text, 0)
		b = append(b, `,"refusal":null,"annotations":[]}`...)
		out = countTokens(text)
	}
	b = append(b, `,"logprobs":null,"finish_reason":"`...)
	b = append(b, finish...)
	b = append(b, `"}],"usage":`...)
	b = x.appendUsage(b, out)
	b = append(b, `,"service_tier":"default","system_fingerprint":"fp_mock"}`...)
	return b
}

// openai writes a Chat Completions stream: a role chunk, content (or
// tool-call argument) chunks, a finish chunk, with stream_options.
// include_usage a usage chunk, then [DONE].
func (s *streamer) openai(text string, tl *tool) {
	x := s.x
	if x.rt.provider == "openrouter" {
		x.w.Header()["X-Generation-Id"] = []string{string(x.appendID(nil, "gen-Mock"))}
	}
	x.start()
	s.sw = sse.NewWriter(x.w)
	if x.rt.provider == "openrouter" {
		s.sw.Comment("OPENROUTER PROCESSING")
	}
	head := make([]byte, 0, 160)
	head = append(head, `{"id":"`...)
	head = x.appendID(head, "chatcmpl-Mock")
	head = append(head, `","object":"chat.completion.chunk","created":`...)
	head = strconv.AppendInt(head, x.created(), 10)
	head = append(head, `,"model":`...)
	head = json.AppendEscape(head, x.chat.model, 0)
	head = append(head, `,"service_tier":"default","system_fingerprint":"fp_mock","choices":[`...)
	tail := `}]}`
	if x.chat.includeUsage {
		tail = `}],"usage":null}`
	}
	b := make([]byte, 0, 512)
	chunk := func(choice string, dyn string, finish string) {
		b = append(b[:0], head...)
		b = append(b, `{"index":0,"delta":`...)
		b = append(b, choice...)
		if dyn != "" {
			b = json.AppendEscape(b, dyn, 0)
			b = append(b, '}')
			if tl != nil {
				b = append(b, "}]}"...)
			}
		}
		b = append(b, `,"logprobs":null,"finish_reason":`...)
		if finish == "" {
			b = append(b, "null"...)
		} else {
			b = append(b, '"')
			b = append(b, finish...)
			b = append(b, '"')
		}
		b = append(b, tail...)
		s.sw.Data(b)
	}
	var pieces []string
	out, finish := 0, "stop"
	if tl != nil {
		args := toolArgs(tl)
		first := make([]byte, 0, 200)
		first = append(first, `{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"`...)
		first = x.appendID(first, "call_Mock")
		first = append(first, `","type":"function","function":{"name":`...)
		first = json.AppendEscape(first, tl.name, 0)
		first = append(first, `,"arguments":""}}],"refusal":null}`...)
		chunk(string(first), "", "")
		a := string(args)
		pieces = []string{a[:len(a)/2], a[len(a)/2:]}
		out, finish = len(args)/4+1, "tool_calls"
	} else {
		chunk(`{"role":"assistant","content":"","refusal":null}`, "", "")
		pieces = tokens(text)
		out = len(pieces)
	}
	for _, p := range pieces {
		if !s.delta() {
			return
		}
		if tl != nil {
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`, p, "")
		} else {
			chunk(`{"content":`, p, "")
		}
	}
	if !s.delta() {
		return
	}
	chunk(`{}`, "", finish)
	if x.chat.includeUsage {
		b = append(b[:0], head...)
		b = append(b, `],"usage":`...)
		b = x.appendUsage(b, out)
		b = append(b, '}')
		s.sw.Data(b)
	}
	s.sw.Data([]byte("[DONE]"))
}
