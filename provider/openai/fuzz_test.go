package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	pt "github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/internal/sse"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// FuzzDecode: see providertest.FuzzDecode.
func FuzzDecode(f *testing.F) {
	seeds := []string{
		`{"id":"c","model":"gpt","choices":[{"index":0,"message":{"content":"hi","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`,
		"data: {\"id\":\"c\",\"model\":\"g\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\",\"tool_calls\":[{\"index\":0,\"id\":\"x\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"stop\"}]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n",
		"data: {\"error\":{\"code\":502,\"message\":\"Provider returned error\"},\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"error\"}]}\n\n",
	}
	pt.FuzzDecode(f, seeds, Decode, func(resp *http.Response) provider.Stream {
		call := httpcall.Call{Provider: "openai", Model: "m"}
		return call.NewStream(context.Background(), resp, &decoder{call: call, h: resp.Header}, "")
	})
}

// BenchmarkDecodeStreamEvent decodes one text delta event of a stream.
func BenchmarkDecodeStreamEvent(b *testing.B) {
	ev := sse.Event{Data: []byte(`{"id":"chatcmpl-S","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b705f0c291","choices":[{"index":0,"delta":{"content":" Paris"},"logprobs":null,"finish_reason":null}]}`)}
	d := &decoder{call: httpcall.Call{Provider: "openai"}, h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := d.Decode(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzUnmarshal checks the decoder (the JSON library) against
// encoding/json: the same error-or-not and, without error, the same fields.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"id":"c","model":"gpt","choices":[{"index":0,"message":{"content":"hi","refusal":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`,
		`{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"a"},{"type":"thinking","thinking":"b"}]},"finish_reason":null}],"usage":null}`,
		`{"error":{"message":"x"},"choices":null}`, `{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`,
		`{"service_tier":"default","usage":{"prompt_tokens":9,"prompt_tokens_details":{"cached_tokens":4,"audio_tokens":null},"completion_tokens_details":{"reasoning_tokens":2},"completion_tokens_details":null}}`,
		`{"usage":{"prompt_tokens_details":3}}`, `{"usage":{"prompt_tokens_details":{"cached_tokens":"x"}}}`,
		`{"id":5}`, `{"choices":[null,{"index":1e2}]}`, `{"id":"a\u00e9\n"}`, `null`, `[]`, `{}`, ` {"id" : "x" } `, `{"id":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want, got wireResponse
		werr := json.Unmarshal(b, &want)
		gerr := rawjson.Unmarshal(b, &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("encoding/json err = %v, unmarshal err = %v", werr, gerr)
		}
		if werr != nil {
			return
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("decoded differently (-encoding/json +unmarshal):\n%s", diff)
		}
	})
}
