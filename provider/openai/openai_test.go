package openai_test

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/classify"
	pt "github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/openai"
)

const okBody = `{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion","created":1741570283,"model":"gpt-4.1-2025-04-14",
"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}],"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"}],
"usage":{"prompt_tokens":82,"completion_tokens":17,"total_tokens":99,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}},
"service_tier":"default","system_fingerprint":"fp_b705f0c291"}`

func chunk(s string) string {
	return `data: {"id":"chatcmpl-S","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b705f0c291",` + s + "}\n\n"
}

var (
	streamHead = ": keep-alive\n\n" + chunk(`"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null`)
	streamText = chunk(`"choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null`) +
		chunk(`"choices":[{"index":0,"delta":{"content":", Paris."},"logprobs":null,"finish_reason":null}],"usage":null`)
	streamTool = chunk(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_T","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null`) +
		chunk(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"logprobs":null,"finish_reason":null}],"usage":null`) +
		chunk(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null`)
	streamFinish = chunk(`"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null`)
	streamUsage  = chunk(`"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":9,"total_tokens":29}`)
	streamDone   = "data: [DONE]\n\n"
)

func newAdapter(base string) provider.Adapter {
	return openai.New(&openai.Config{BaseURL: base + "/v1", APIKey: "sk-proj-Q8vT3kLm9XzR2bWn5YcJ7pHf4sDg1uEa6oKi0tNxMw", Model: "gpt-4.1"})
}

func TestEncodeToolConversation(t *testing.T) {
	body, err := openai.Encode(pt.ToolConversation(), "gpt-x", true)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"gpt-x","max_completion_tokens":256,"temperature":0.2,"stop":["END"],"stream":true,"stream_options":{"include_usage":true},
	"messages":[
	 {"role":"system","content":"You are terse."},
	 {"role":"user","content":"Weather in Paris?"},
	 {"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
	 {"role":"tool","tool_call_id":"call_1","content":"{\"temp_c\":21}"},
	 {"role":"user","content":"And tomorrow?"}],
	"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],
	"tool_choice":"auto"}`
	pt.SameJSON(t, want, body)
}

func TestEncode(t *testing.T) {
	user := []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hi"}}}}
	extra := map[string]json.RawMessage{"response_format": json.RawMessage(`{"type":"json_object"}`),
		"stream": json.RawMessage(`true`), "seed": json.RawMessage(`7`)}
	tests := []struct {
		name string
		req  provider.Request
		want string
	}{
		{"extra passes through in its own dialect", provider.Request{Messages: user, Dialect: "openai", Extra: extra, MaxTokens: 9},
			`{"model":"m","max_completion_tokens":9,"response_format":{"type":"json_object"},"seed":7,"messages":[{"role":"user","content":"hi"}]}`},
		{"extra dropped from another dialect", provider.Request{Messages: user, Dialect: "anthropic", Extra: extra},
			`{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"image detail and unknown parts pass through in their own dialect", provider.Request{Dialect: "openai",
			Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{
				{Type: provider.PartImage, Image: &provider.Image{URL: "https://x/a.png"}, Extra: map[string]json.RawMessage{"detail": json.RawMessage(`"low"`)}},
				{Type: "input_audio", Extra: map[string]json.RawMessage{"input_audio": json.RawMessage(`{"data":"UklG","format":"wav"}`)}}}}}},
			`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/a.png","detail":"low"}},
			{"type":"input_audio","input_audio":{"data":"UklG","format":"wav"}}]}]}`},
		{"at most 4 stop sequences from another dialect", provider.Request{Dialect: "anthropic", Stop: []string{"a", "b", "c", "d", "e"}, Messages: user},
			`{"model":"m","stop":["a","b","c","d"],"messages":[{"role":"user","content":"hi"}]}`},
		{"metadata from another dialect is dropped", provider.Request{Dialect: "anthropic", Metadata: map[string]string{"user_id": "u"}, Messages: user},
			`{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"another dialect's blocks are left out", provider.Request{Dialect: "anthropic",
			Messages: []provider.Message{{Role: provider.RoleAssistant, Content: []provider.Part{
				{Type: "thinking", Extra: map[string]json.RawMessage{"thinking": json.RawMessage(`"hmm"`)}},
				{Type: provider.PartText, Text: "ok"}}}}},
			`{"model":"m","messages":[{"role":"assistant","content":"ok"}]}`},
		{"anthropic-style tool results in a user turn, images, named tool", provider.Request{
			Dialect:    "openai",
			Metadata:   map[string]string{"k": "v"},
			ToolChoice: &provider.ToolChoice{Mode: "tool", Name: "f"},
			Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{
				{Type: provider.PartToolResult, ToolResult: &provider.ToolResult{CallID: "toolu_1", Content: "42", IsError: true}},
				{Type: provider.PartText, Text: "look"},
				{Type: provider.PartImage, Image: &provider.Image{MediaType: "image/png", Data: "iVBORw0KGgo="}}}}}},
			`{"model":"m","metadata":{"k":"v"},"tool_choice":{"type":"function","function":{"name":"f"}},
			"messages":[{"role":"tool","tool_call_id":"toolu_1","content":"42"},
			{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := openai.Encode(&tc.req, "m", false)
			if err != nil {
				t.Fatal(err)
			}
			pt.SameJSON(t, tc.want, body)
		})
	}
}

// TestDialects checks URL, auth and the per-provider quirks on the wire.
func TestDialects(t *testing.T) {
	tests := []struct {
		name      string
		cfg       openai.Config
		wantPath  string
		wantQuery string
		wantAuth  [2]string // header, value
		wantKeys  []string  // body keys expected
		wantNot   []string  // body keys that must be absent
	}{
		{"openai", openai.Config{Name: "openai", APIKey: "sk-1"}, "/v1/chat/completions", "",
			[2]string{"Authorization", "Bearer sk-1"}, []string{"max_completion_tokens", "metadata", "stream_options"}, []string{"max_tokens"}},
		{"groq", openai.Config{Name: "groq", APIKey: "gsk_1"}, "/v1/chat/completions", "",
			[2]string{"Authorization", "Bearer gsk_1"}, []string{"max_tokens", "stream_options"}, []string{"max_completion_tokens", "metadata"}},
		{"mistral", openai.Config{Name: "mistral", APIKey: "m1"}, "/v1/chat/completions", "",
			[2]string{"Authorization", "Bearer m1"}, []string{"max_tokens"}, []string{"stream_options", "metadata"}},
		{"azure", openai.Config{Name: "azure", APIKey: "az1", APIVersion: "2024-10-21"}, "/openai/deployments/my-dep/chat/completions", "api-version=2024-10-21",
			[2]string{"api-key", "az1"}, []string{"max_tokens", "stream_options"}, []string{"metadata"}},
		{"no key", openai.Config{Name: "openai-compatible"}, "/v1/chat/completions", "",
			[2]string{"Authorization", ""}, []string{"max_tokens"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := pt.NewUpstream(t, pt.SSE(streamHead+streamText+streamFinish+streamUsage+streamDone, "apim-request-id", "b0f3"))
			cfg := tc.cfg
			cfg.BaseURL = up.URL + "/v1"
			if cfg.Name == "azure" {
				cfg.BaseURL = up.URL
			}
			req := &provider.Request{Model: "my-dep", MaxTokens: 10, Metadata: map[string]string{"a": "b"}, Dialect: "openai",
				Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hi"}}}}}
			st, err := openai.New(&cfg).Stream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			chunks, err := pt.Collect(st)
			if err != io.EOF || pt.Assemble(chunks).Text != "Hello, Paris." || st.RequestID() != "b0f3" {
				t.Fatalf("stream: %v %+v id %q", err, pt.Assemble(chunks), st.RequestID())
			}
			got := up.Last()
			if got.Path != tc.wantPath || got.RawQuery != tc.wantQuery {
				t.Errorf("url = %s?%s, want %s?%s", got.Path, got.RawQuery, tc.wantPath, tc.wantQuery)
			}
			if v := got.Header.Get(tc.wantAuth[0]); v != tc.wantAuth[1] {
				t.Errorf("%s = %q, want %q", tc.wantAuth[0], v, tc.wantAuth[1])
			}
			var body map[string]any
			json.Unmarshal(got.Body, &body)
			for _, k := range tc.wantKeys {
				if _, ok := body[k]; !ok {
					t.Errorf("body lacks %q: %s", k, got.Body)
				}
			}
			for _, k := range tc.wantNot {
				if _, ok := body[k]; ok {
					t.Errorf("body has %q: %s", k, got.Body)
				}
			}
		})
	}
}

func TestChat(t *testing.T) {
	up := pt.NewUpstream(t, pt.Reply(200, okBody, "x-request-id", "req_abc"))
	resp, err := newAdapter(up.URL).Chat(context.Background(), pt.ToolConversation())
	if err != nil {
		t.Fatal(err)
	}
	want := &provider.Response{ID: "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", Provider: "openai", Model: "gpt-4.1-2025-04-14",
		FinishReason: provider.FinishToolCalls, RequestID: "req_abc",
		ToolCalls: []provider.ToolCall{{ID: "call_abc", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}},
		Usage:     provider.Usage{InputTokens: 82, OutputTokens: 17, ServiceTier: "default"}}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if got := up.Last(); got.Path != "/v1/chat/completions" || got.Header.Get("Authorization") != "Bearer sk-proj-Q8vT3kLm9XzR2bWn5YcJ7pHf4sDg1uEa6oKi0tNxMw" {
		t.Errorf("request %s %v", got.Path, got.Header)
	}
}

func TestStream(t *testing.T) {
	base := pt.Assembled{ID: "chatcmpl-S", Model: "gpt-4.1-2025-04-14"}
	full := base
	full.Text, full.FinishReason, full.Usage = "Hello, Paris.", provider.FinishToolCalls, provider.Usage{InputTokens: 20, OutputTokens: 9}
	full.ToolCalls = []provider.ToolCall{{ID: "call_T", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}
	noDone := full
	noDone.ToolCalls = nil
	text := base
	text.Text = "Hello, Paris."
	tests := []pt.StreamCase{
		{Name: "text, tool call, usage, [DONE]", Stream: streamHead + streamText + streamTool + streamFinish + streamUsage + streamDone, Want: full},
		{Name: "no [DONE] after finish and usage ends cleanly", Stream: streamHead + streamText + streamFinish + streamUsage, Want: noDone},
		{Name: "finish without usage and no [DONE] is truncated", Stream: streamHead + streamText + streamFinish,
			Want: pt.Assembled{ID: "chatcmpl-S", Model: "gpt-4.1-2025-04-14", Text: "Hello, Paris.", FinishReason: provider.FinishToolCalls}, Class: classify.Network, After: true},
		{Name: "truncated after text", Stream: streamHead + streamText, Want: text, Class: classify.Network, After: true},
		{Name: "truncated inside a chunk", Stream: streamHead + streamText + `data: {"id":"chatcmpl-S","choi`, Want: text, Class: classify.Network, After: true},
		{Name: "openrouter error chunk after text", Stream: streamHead + streamText +
			`data: {"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"m","provider":"OpenAI","error":{"code":502,"message":"Provider returned error","metadata":{"provider_name":"OpenAI"}},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}` + "\n\n",
			Want: text, Class: classify.ServerError, After: true},
	}
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			up := pt.NewUpstream(t, pt.SSE(tc.Stream, "x-request-id", "req_S"))
			st, err := openai.New(&openai.Config{Name: "openrouter", BaseURL: up.URL + "/v1", APIKey: "k"}).Stream(context.Background(), pt.ToolConversation())
			if err != nil {
				t.Fatal(err)
			}
			tc.Check(t, st)
		})
	}
}

func TestSuite(t *testing.T) {
	pt.Suite{New: newAdapter, StreamHead: streamHead, Errors: errorCases}.Run(t)
	t.Run("compatible family", func(t *testing.T) {
		for _, tc := range compatCases {
			t.Run(tc.name, func(t *testing.T) {
				pt.Suite{New: func(base string) provider.Adapter {
					return openai.New(&openai.Config{Name: tc.name, BaseURL: base, APIKey: "k"})
				}, Errors: tc.cases}.RunErrors(t)
			})
		}
	})
}

// errorCases are OpenAI's documented error bodies
// (platform.openai.com/docs/guides/error-codes, /work/shared/provider-errors.md).
var errorCases = []pt.ErrorCase{
	{Name: "429 insufficient quota", Status: 429, Header: []string{"x-request-id", "req_q"},
		Body: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, Want: classify.QuotaExhausted},
	{Name: "429 rate limit", Status: 429, Header: []string{"x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "9.816s"},
		Body: `{"error":{"message":"Rate limit reached for gpt-4 in organization org-abc on tokens per min (TPM): Limit 10000, Used 8554, Requested 3082. Please try again in 9.816s. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`, Want: classify.RateLimited},
	{Name: "401 bad key", Status: 401, Body: `{"error":{"message":"Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, Want: classify.Auth},
	{Name: "403 region", Status: 403, Body: `{"error":{"code":"unsupported_country_region_territory","message":"Country, region, or territory not supported","param":null,"type":"request_forbidden"}}`, Want: classify.Permission},
	{Name: "404 model", Status: 404, Body: `{"error":{"message":"The model gpt-5-nope does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, Want: classify.NotFound},
	{Name: "400 context", Status: 400, Body: `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, Want: classify.ContextLengthExceeded},
	{Name: "400 invalid", Status: 400, Body: `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`, Want: classify.InvalidRequest},
	{Name: "500 server error", Status: 500, Body: `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`, Want: classify.ServerError},
	{Name: "503 overloaded", Status: 503, Body: `{"error":{"message":"That model is currently overloaded with other requests. You can retry your request, or contact us through our help center at help.openai.com if the error persists. (Please include the request ID 0123456789abcdef0123456789abcdef in your message.)","type":"server_error","param":null,"code":null}}`, Want: classify.Overloaded},
}

var compatCases = []struct {
	name  string
	cases []pt.ErrorCase
}{
	{"azure", []pt.ErrorCase{
		{Name: "400 content filter", Status: 400, Header: []string{"apim-request-id", "6a3b"},
			Body: `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":false,"severity":"safe"},"jailbreak":{"filtered":true,"detected":true},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}}}}`, Want: classify.ContentFiltered},
		{Name: "429 token rate", Status: 429, Header: []string{"retry-after", "60"},
			Body: `{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 60 seconds."}}`, Want: classify.RateLimited},
		{Name: "404 deployment", Status: 404, Body: `{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."}}`, Want: classify.NotFound},
	}},
	{"deepseek", []pt.ErrorCase{
		{Name: "402 balance", Status: 402, Body: `{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}`, Want: classify.QuotaExhausted},
		{Name: "503 overloaded", Status: 503, Body: `{"error":{"message":"Server overloaded, please try again later","type":"service_unavailable_error","param":null,"code":"invalid_request_error"}}`, Want: classify.Overloaded},
	}},
	{"groq", []pt.ErrorCase{
		{Name: "413 TPM", Status: 413, Header: []string{"retry-after", "64"},
			Body: `{"error":{"message":"Request too large for model ` + "`llama-3.3-70b-versatile`" + ` in organization ` + "`org_01`" + ` service tier ` + "`on_demand`" + ` on tokens per minute (TPM): Limit 6000, Requested 12089, please reduce your message size and try again.","type":"tokens","code":"rate_limit_exceeded"}}`, Want: classify.RequestTooLarge},
	}},
	{"mistral", []pt.ErrorCase{
		{Name: "429 rate", Status: 429, Body: `{"object":"error","message":"Rate limit exceeded","type":"rate_limited","param":null,"code":"1300"}`, Want: classify.RateLimited},
	}},
	{"openrouter", []pt.ErrorCase{
		{Name: "402 credits", Status: 402, Body: `{"error":{"code":402,"message":"Insufficient credits. Add more using https://openrouter.ai/settings/credits","metadata":{}},"user_id":"user_2x"}`, Want: classify.QuotaExhausted},
	}},
	{"xai", []pt.ErrorCase{
		{Name: "400 bad key", Status: 400, Body: `{"code":"Client specified an invalid argument","error":"Incorrect API key provided: xa***yz. You can obtain an API key from https://console.x.ai."}`, Want: classify.Auth},
	}},
	{"together", []pt.ErrorCase{
		{Name: "429 credit_limit type is an RPM limit", Status: 429, Body: `{"error":{"message":"You have been rate limited. Your rate limit is 60 queries per minute. Please navigate to https://api.together.xyz/settings/billing to upgrade to a higher tier.","type":"credit_limit","param":null,"code":null}}`, Want: classify.RateLimited},
	}},
	{"fireworks", []pt.ErrorCase{
		{Name: "401", Status: 401, Body: `{"error":{"object":"error","type":"invalid_request_error","message":"The API key you provided is invalid."}}`, Want: classify.Auth},
	}},
}

// TestDecodeContentShapes: content as null, string or an array of parts
// (Mistral's reasoning models) all decode.
func TestDecodeContentShapes(t *testing.T) {
	tests := []struct{ content, want string }{
		{`null`, ""},
		{`"plain"`, "plain"},
		{`[{"type":"thinking","thinking":[{"type":"text","text":"hmm"}]},{"type":"text","text":"The answer"},{"type":"text","text":" is 4."}]`, "The answer is 4."},
	}
	for _, tc := range tests {
		resp, err := openai.Decode([]byte(`{"id":"x","model":"magistral-medium-latest","choices":[{"index":0,"message":{"role":"assistant","content":` +
			tc.content + `},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`))
		if err != nil || resp.Text != tc.want {
			t.Errorf("content %s: %+v, %v; want %q", tc.content, resp, err, tc.want)
		}
	}
	if _, err := openai.Decode([]byte(`{"choices":[{"message":{"content":7}}]}`)); err == nil {
		t.Errorf("content 7 decoded")
	}
}
