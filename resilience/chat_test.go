package resilience_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
)

// One answer per dialect, as the API sends it whole and as it streams it,
// in the shapes of the providers' docs: thinking blocks, text, a tool call,
// cached and reasoning tokens, the service tier.
var answers = []answer{{
	provider: "anthropic", base: "",
	json: `{"id":"msg_01Thk","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
"content":[{"type":"thinking","thinking":"Let me check the weather.","signature":"WaUjzkypQ2mUEVM36O2TxuC06KN8"},
{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"},{"type":"text","text":"Let me look that up."},
{"type":"tool_use","id":"toolu_01T","name":"get_weather","input":{"city":"Paris"}}],
"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":120,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens":80,"service_tier":"standard"}}`,
	sse: "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_01Thk","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":120,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens":1,"service_tier":"standard"}}}` + "\n\n" +
		"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}` + "\n\n" +
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me check "}}` + "\n\n" +
		"event: ping\n" + `data: {"type": "ping"}` + "\n\n" +
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"the weather."}}` + "\n\n" +
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"WaUjzkypQ2mUEVM36O2TxuC06KN8"}}` + "\n\n" +
		"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
		"event: content_block_start\n" + `data: {"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}}` + "\n\n" +
		"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":1}` + "\n\n" +
		"event: content_block_start\n" + `data: {"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}` + "\n\n" +
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Let me look "}}` + "\n\n" +
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"that up."}}` + "\n\n" +
		"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":2}` + "\n\n" +
		"event: content_block_start\n" + `data: {"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_01T","name":"get_weather","input":{}}}` + "\n\n" +
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"city\": "}}` + "\n\n" +
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}` + "\n\n" +
		"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":3}` + "\n\n" +
		"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":80}}` + "\n\n" +
		"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n",
}, {
	provider: "openai", base: "/v1",
	json: `{"id":"chatcmpl-A1","object":"chat.completion","created":1764000000,"model":"gpt-4o-2024-08-06",
"choices":[{"index":0,"message":{"role":"assistant","content":"Let me look that up.","refusal":null,
"tool_calls":[{"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]},"logprobs":null,"finish_reason":"tool_calls"}],
"usage":{"prompt_tokens":120,"completion_tokens":80,"total_tokens":200,"prompt_tokens_details":{"cached_tokens":30},"completion_tokens_details":{"reasoning_tokens":12}},
"service_tier":"default","system_fingerprint":"fp_1"}`,
	sse: `data: {"id":"chatcmpl-A1","object":"chat.completion.chunk","created":1764000000,"model":"gpt-4o-2024-08-06","service_tier":"default","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-A1","object":"chat.completion.chunk","created":1764000000,"model":"gpt-4o-2024-08-06","service_tier":"default","choices":[{"index":0,"delta":{"content":"Let me look "},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-A1","object":"chat.completion.chunk","created":1764000000,"model":"gpt-4o-2024-08-06","service_tier":"default","choices":[{"index":0,"delta":{"content":"that up."},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-A1","object":"chat.completion.chunk","created":1764000000,"model":"gpt-4o-2024-08-06","service_tier":"default","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-A1","object":"chat.completion.chunk","created":1764000000,"model":"gpt-4o-2024-08-06","service_tier":"default","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": "}}]},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-A1","object":"chat.completion.chunk","created":1764000000,"model":"gpt-4o-2024-08-06","service_tier":"default","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-A1","object":"chat.completion.chunk","created":1764000000,"model":"gpt-4o-2024-08-06","service_tier":"default","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
		`data: {"id":"chatcmpl-A1","object":"chat.completion.chunk","created":1764000000,"model":"gpt-4o-2024-08-06","service_tier":"default","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":80,"total_tokens":200,"prompt_tokens_details":{"cached_tokens":30},"completion_tokens_details":{"reasoning_tokens":12}}}` + "\n\n" +
		"data: [DONE]\n\n",
}, {
	provider: "gemini", base: "",
	json: `{"candidates":[{"content":{"role":"model","parts":[{"text":"Let me look that up."},{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]},"finishReason":"STOP","index":0}],
"usageMetadata":{"promptTokenCount":120,"candidatesTokenCount":68,"thoughtsTokenCount":12,"cachedContentTokenCount":30,"totalTokenCount":200},"modelVersion":"gemini-2.5-flash","responseId":"resp-1"}`,
	sse: `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Let me look "}]},"index":0}],"usageMetadata":{"promptTokenCount":120,"totalTokenCount":120},"modelVersion":"gemini-2.5-flash","responseId":"resp-1"}` + "\r\n\r\n" +
		`data: {"candidates":[{"content":{"role":"model","parts":[{"text":"that up."},{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":120,"candidatesTokenCount":68,"thoughtsTokenCount":12,"cachedContentTokenCount":30,"totalTokenCount":200},"modelVersion":"gemini-2.5-flash","responseId":"resp-1"}` + "\r\n\r\n",
}}

// A non-streaming call is made upstream as a stream and assembled; the
// answer is the one the provider's non-streaming API gives: text, thinking
// blocks, tool calls, finish reason, usage, ids, request id. A server that
// answers the stream request with the whole JSON body gives the same.
func TestChatAssembledEqualsNonStreamed(t *testing.T) {
	for _, a := range answers {
		for _, noStream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/json-for-a-stream=%v", a.provider, noStream), func(t *testing.T) {
				chatAssembled(t, a, noStream)
			})
		}
	}
}

// answer is one dialect's answer, whole and streamed.
type answer struct{ provider, base, json, sse string }

// chatAssembled compares the engine's Chat (a stream upstream, assembled)
// with the adapter's plain Chat of the same answer. noStream: the upstream
// answers the stream request with the whole JSON body.
func chatAssembled(t *testing.T, a answer, noStream bool) {
	var streamed, plain int
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Request-Id", "req_same")
		w.Header().Set("X-Request-Id", "req_same")
		if strings.Contains(r.URL.Path, "streamGenerateContent") || strings.Contains(readAll(r), `"stream":true`) {
			streamed++
			if noStream {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(a.json))
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(a.sse))
			return
		}
		plain++
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(a.json))
	}))
	defer up.Close()
	p := &registry.Settings{APIKey: "sk-test-000000000000", BaseURL: up.URL + a.base}
	ad, err := registry.New(a.provider, p, up.Client())
	if err != nil {
		t.Fatal(err)
	}
	req := &provider.Request{Model: "m", MaxTokens: 100, Messages: []provider.Message{{Role: provider.RoleUser,
		Content: []provider.Part{{Type: provider.PartText, Text: "weather in Paris?"}}}},
		Tools: []provider.Tool{{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}}
	want, err := ad.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := resilience.New(&resilience.Options{
		Routes:   map[string]resilience.Route{"default": {Targets: []resilience.Target{{Name: a.provider + "/m"}}}},
		Adapters: map[string]provider.Adapter{a.provider: ad},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Chat(context.Background(), &resilience.Call{Request: req})
	if err != nil {
		t.Fatal(err)
	}
	if streamed != 1 || plain != 1 {
		t.Errorf("upstream: %d streamed, %d plain requests; want the engine's one streamed", streamed, plain)
	}
	if diff := cmp.Diff(want, res.Response, jsonEqual); diff != "" {
		t.Errorf("assembled answer differs from the non-streamed one (-plain +assembled):\n%s", diff)
	}
	if len(want.ToolCalls) != 1 || want.Usage.CacheReadTokens == 0 || (a.provider == "anthropic" && len(want.Thinking) != 2) {
		t.Errorf("fixture not decoded as meant: %+v", want)
	}
}

// jsonEqual compares JSON values (tool arguments, thinking fields) by meaning.
var jsonEqual = cmp.Comparer(func(a, b json.RawMessage) bool {
	return jsonValue(a) == jsonValue(b)
})

func jsonValue(b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return "invalid: " + string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func readAll(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}
