package provider

import (
	"encoding/json"
	"io"

	"github.com/llmguard/llmguard/internal/rawjson"
)

// Chunks returns r as the chunks of a stream that says the same, so that a
// stream of them assembles back into r: the model, id and prompt usage
// (Usage.Prompt, what a stream says at its start), each thinking
// block whole, the text, each tool call whole, then the finish reason and
// stop sequence with the usage. Dropped rides on the first chunk.
func (r *Response) Chunks() []Chunk {
	out := make([]Chunk, 0, len(r.Thinking)+len(r.ToolCalls)+3)
	start := r.Usage.Prompt()
	out = append(out, Chunk{Model: r.Model, ID: r.ID, Dropped: r.Dropped, Usage: &start})
	for i, p := range r.Thinking {
		d := &ThinkingDelta{Index: i, Type: p.Type}
		str := func(k string) string {
			var s string
			_ = rawjson.Unmarshal(p.Extra[k], &s) // absent or not a string: ""
			return s
		}
		d.Thinking, d.Signature, d.Data = str("thinking"), str("signature"), str("data")
		out = append(out, Chunk{Thinking: d})
	}
	if r.Text != "" {
		out = append(out, Chunk{Text: r.Text})
	}
	for i, tc := range r.ToolCalls {
		out = append(out, Chunk{ToolCall: &ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Name,
			Arguments: string(tc.Arguments), Extra: tc.Extra}})
	}
	u := r.Usage
	return append(out, Chunk{FinishReason: r.FinishReason, StopSequence: r.StopSequence, Usage: &u})
}

// RawAnswerer is implemented by a Stream that can give, once it has
// delivered its finish reason, the upstream's answer as a non-streaming
// call gets it (Response.Raw): the stream of an adapter relaying the
// request's Passthrough body rebuilds it from the events, so that a
// non-streaming call made as a stream still relays the provider's answer.
// RawAnswer is nil when the adapter does not relay the request or the
// answer is not complete.
type RawAnswerer interface {
	RawAnswer() json.RawMessage
}

// ChunkStream is a Stream of chunks in memory: a whole answer read as a
// stream, a stored one replayed. Recv returns them in turn, then io.EOF.
// Its zero value is a stream that has ended.
type ChunkStream struct {
	Chunks []Chunk
	ID     string // the provider's request id
}

// Recv implements Stream.
func (s *ChunkStream) Recv() (Chunk, error) {
	if len(s.Chunks) == 0 {
		return Chunk{}, io.EOF
	}
	c := s.Chunks[0]
	s.Chunks = s.Chunks[1:]
	return c, nil
}

// Buffered implements BufferReporter: the chunks are in memory.
func (s *ChunkStream) Buffered() bool { return len(s.Chunks) > 0 }

// Close implements Stream: the chunks left are dropped.
func (s *ChunkStream) Close() error { s.Chunks = nil; return nil }

// RequestID implements Stream.
func (s *ChunkStream) RequestID() string { return s.ID }
