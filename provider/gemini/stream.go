package gemini

import (
	"net/http"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/internal/sse"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// decoder turns streamGenerateContent?alt=sse events into canonical chunks.
// Gemini has no terminator: the last event carries finishReason and
// usageMetadata, and the stream then ends.
type decoder struct {
	call    httpcall.Call
	h       http.Header
	started bool
	calls   int
}

// DecodeWhole implements httpcall.WholeDecoder: a non-streaming answer to a
// streaming request.
func (d *decoder) DecodeWhole(body []byte) (*provider.Response, error) { return Decode(body) }

// Decode implements httpcall.Decoder.
func (d *decoder) Decode(ev sse.Event) ([]provider.Chunk, bool, error) {
	var r wireResponse
	if err := rawjson.Unmarshal(ev.Data, &r); err != nil {
		return nil, false, err
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		return nil, false, d.call.StreamEvent(d.h, ev.Name, ev.Data)
	}
	if len(r.Candidates) == 0 && r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		return nil, false, d.call.StreamEvent(d.h, ev.Name, ev.Data)
	}
	var out []provider.Chunk
	if !d.started && (r.ResponseID != "" || r.ModelVersion != "") {
		d.started = true
		out = append(out, provider.Chunk{ID: r.ResponseID, Model: r.ModelVersion})
	}
	if len(r.Candidates) == 0 {
		return out, false, nil
	}
	c := r.Candidates[0]
	if c.Content != nil {
		for _, p := range c.Content.Parts {
			switch {
			case p.FunctionCall != nil:
				tc := p.toolCall(d.calls)
				out = append(out, provider.Chunk{ToolCall: &provider.ToolCallDelta{Index: d.calls, ID: tc.ID,
					Name: tc.Name, Arguments: string(tc.Arguments), Extra: tc.Extra}})
				d.calls++
			case p.Text != "" && !p.Thought:
				out = append(out, provider.Chunk{Text: p.Text})
			}
		}
	}
	if c.FinishReason != "" {
		ch := provider.Chunk{FinishReason: finish(c.FinishReason, d.calls > 0)}
		if r.UsageMetadata != nil {
			u := r.UsageMetadata.canonical()
			ch.Usage = &u
		}
		out = append(out, ch)
	}
	return out, false, nil
}
