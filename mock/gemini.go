package mock

import (
	"github.com/llmguard/llmguard/internal/sse"
	"github.com/segmentio/encoding/json"
)

func (x *reply) appendGeminiTail(b []byte, out int, final bool) []byte {
	in := x.chat.inputTokens
	b = append(b, `"usageMetadata":{"promptTokenCount":`...)
	b = appendInt(b, in)
	if out > 0 {
		b = append(b, `,"candidatesTokenCount":`...)
		b = appendInt(b, out)
	}
	b = append(b, `,"totalTokenCount":`...)
	b = appendInt(b, in+out)
	if final {
		b = append(b, `,"promptTokensDetails":[{"modality":"TEXT","tokenCount":`...)
		b = appendInt(b, in)
		b = append(b, "}]"...)
	}
	b = append(b, `},"modelVersion":`...)
	b = json.AppendEscape(b, x.chat.model, 0)
	b = append(b, `,"responseId":"`...)
	b = x.appendID(b, "mockResp")
	return append(b, `"}`...)
}

func appendFunctionCall(b []byte, tl *tool, args []byte) []byte {
	b = append(b, `{"functionCall":{"name":`...)
	b = json.AppendEscape(b, tl.name, 0)
	b = append(b, `,"args":`...)
	b = append(b, args...)
	return append(b, "}}"...)
}

// geminiResponse builds a generateContent response.
func (x *reply) geminiResponse(text string, tl *tool) []byte {
	b := make([]byte, 0, 512)
	b = append(b, `{"candidates":[{"content":{"parts":[`...)
	out := 0
	if tl != nil {
		args := toolArgs(tl)
		b = appendFunctionCall(b, tl, args)
		out = len(args)/4 + 1
	} else {
		b = append(b, `{"text":`...)
		b = json.AppendEscape(b, text, 0)
		b = append(b, '}')
		out = countTokens(text)
	}
	b = append(b, `],"role":"model"},"finishReason":"STOP","index":0}],`...)
	return x.appendGeminiTail(b, out, true)
}

// gemini writes a streamGenerateContent answer: SSE with alt=sse, else a
// JSON array; every chunk carries usageMetadata, the last finishReason.
func (s *streamer) gemini(text string, tl *tool) {
	x := s.x
	x.start()
	if x.rt.sse {
		s.sw = sse.NewWriter(x.w)
	} else {
		s.array, s.first = true, true
	}
	b := make([]byte, 0, 512)
	if tl != nil {
		if !s.delta() {
			return
		}
		args := toolArgs(tl)
		b = append(b, `{"candidates":[{"content":{"parts":[`...)
		b = appendFunctionCall(b, tl, args)
		b = append(b, `],"role":"model"},"finishReason":"STOP","index":0}],`...)
		b = x.appendGeminiTail(b, len(args)/4+1, true)
		s.data(b)
		s.end()
		return
	}
	pieces := tokens(text)
	for i, p := range pieces {
		if !s.delta() {
			return
		}
		last := i == len(pieces)-1
		b = append(b[:0], `{"candidates":[{"content":{"parts":[{"text":`...)
		b = json.AppendEscape(b, p, 0)
		b = append(b, `}],"role":"model"}`...)
		if last {
			b = append(b, `,"finishReason":"STOP"`...)
		}
		b = append(b, `,"index":0}],`...)
		b = x.appendGeminiTail(b, i+1, last)
		s.data(b)
	}
	s.end()
}

func (s *streamer) end() {
	if s.array {
		s.x.w.Write([]byte("]"))
	}
}
