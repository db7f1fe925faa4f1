package openai_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	pt "github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
)

// richCompletion has what the canonical form lacks: a refusal, logprobs,
// annotations, a system fingerprint, usage details; richChunks is the same
// answer streamed (with a tool call, in two choices' worth of deltas).
const richCompletion = `{"id":"chatcmpl-Rich","object":"chat.completion","created":1,"model":"gpt-4o-2024-08-06",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there","refusal":null,` +
	`"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}],` +
	`"annotations":[{"type":"url_citation","url_citation":{"url":"https://x.test","title":"X","start_index":0,"end_index":5}}]},` +
	`"logprobs":{"content":[{"token":"Hello","logprob":-0.1,"bytes":[72],"top_logprobs":[]},{"token":" there","logprob":-0.2,"bytes":[32],"top_logprobs":[]}],"refusal":null},"finish_reason":"tool_calls"}],` +
	`"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}},` +
	`"service_tier":"default","system_fingerprint":"fp_1"}`

const chunkHead = `data: {"id":"chatcmpl-Rich","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_1","choices":[`

var richChunks = chunkHead + `{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":{"content":[],"refusal":null},"finish_reason":null}]}` + "\n\n" +
	chunkHead + `{"index":0,"delta":{"content":"Hello"},"logprobs":{"content":[{"token":"Hello","logprob":-0.1,"bytes":[72],"top_logprobs":[]}],"refusal":null},"finish_reason":null}]}` + "\n\n" +
	chunkHead + `{"index":0,"delta":{"content":" there","annotations":[{"type":"url_citation","url_citation":{"url":"https://x.test","title":"X","start_index":0,"end_index":5}}]},"logprobs":{"content":[{"token":" there","logprob":-0.2,"bytes":[32],"top_logprobs":[]}],"refusal":null},"finish_reason":null}]}` + "\n\n" +
	chunkHead + `{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
	chunkHead + `{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
	chunkHead + `{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
	chunkHead + `{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}` + "\n\n" +
	`data: {"id":"chatcmpl-Rich","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_1","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}` + "\n\n" +
	"data: [DONE]\n\n"

// A relayed request's stream rebuilds the chat.completion the API gives the
// same request without streaming.
func TestStreamRebuildsRelayedCompletion(t *testing.T) {
	body := []byte(`{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}],"logprobs":true}`)
	relayed := &provider.Request{Dialect: "openai", Passthrough: &provider.Passthrough{Dialect: "openai", Body: body}, Assemble: true,
		Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hi"}}}}}
	for _, name := range []string{"stream", "json answer to a stream request"} {
		t.Run(name, func(t *testing.T) {
			h := pt.SSE(richChunks)
			if name != "stream" {
				h = pt.Reply(200, richCompletion)
			}
			up := pt.NewUpstream(t, h)
			s, err := newAdapter(up.URL).Stream(context.Background(), relayed)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = pt.Collect(s)
			raw := s.(provider.RawAnswerer).RawAnswer()
			if d := cmp.Diff(pt.JSON(t, []byte(richCompletion)), pt.JSON(t, raw)); d != "" {
				t.Errorf("rebuilt completion (-non-streamed +rebuilt):\n%s", d)
			}
		})
	}
	// A stream relayed to its client (no Assemble) rebuilds nothing.
	relayedStream := *relayed
	relayedStream.Assemble = false
	s, err := newAdapter(pt.NewUpstream(t, pt.SSE(richChunks)).URL).Stream(context.Background(), &relayedStream)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = pt.Collect(s)
	if raw := s.(provider.RawAnswerer).RawAnswer(); raw != nil {
		t.Errorf("raw answer for a stream relayed to its client: %s", raw)
	}
}
