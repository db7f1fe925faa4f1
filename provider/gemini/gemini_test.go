package gemini_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/classify"
	pt "github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/gemini"
)

const okBody = `{"candidates":[{"content":{"parts":[{"text":"thinking...","thought":true},{"text":"Let me check."},{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"CiQBVKhc7"}],"role":"model"},"finishReason":"STOP","index":0}],
"usageMetadata":{"promptTokenCount":40,"candidatesTokenCount":12,"totalTokenCount":70,"thoughtsTokenCount":18,"promptTokensDetails":[{"modality":"TEXT","tokenCount":40}]},
"modelVersion":"gemini-2.5-flash","responseId":"mO2kaP6yKo"}`

func event(s string) string { return "data: " + s + "\r\n\r\n" }

var (
	streamHead = event(`{"candidates": [{"content": {"parts": [{"text": ""}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 9,"totalTokenCount": 9},"modelVersion": "gemini-2.5-flash","responseId": "r1"}`)
	streamText = event(`{"candidates": [{"content": {"parts": [{"text": "Hello"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 9,"totalTokenCount": 9},"modelVersion": "gemini-2.5-flash","responseId": "r1"}`) +
		event(`{"candidates": [{"content": {"parts": [{"text": ", Paris."}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 9,"totalTokenCount": 11},"modelVersion": "gemini-2.5-flash","responseId": "r1"}`)
	streamTool = event(`{"candidates": [{"content": {"parts": [{"functionCall": {"name": "get_weather","args": {"city": "Paris"}},"thoughtSignature": "Sig1"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 9,"totalTokenCount": 12},"modelVersion": "gemini-2.5-flash","responseId": "r1"}`)
	streamLast = event(`{"candidates": [{"content": {"parts": [{"text": ""}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 9,"candidatesTokenCount": 6,"totalTokenCount": 15},"modelVersion": "gemini-2.5-flash","responseId": "r1"}`)
)

func newAdapter(base string) provider.Adapter {
	return gemini.New(&gemini.Config{BaseURL: base, APIKey: "AIzaSyD4kT9xQw2LmN7pRb3VcZ8sHf1JgY6uE0a", Model: "gemini-2.5-flash"})
}

func TestEncodeToolConversation(t *testing.T) {
	body, err := gemini.Encode(pt.ToolConversation(), "gemini-2.5-flash")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"systemInstruction":{"parts":[{"text":"You are terse."}]},
	"generationConfig":{"maxOutputTokens":256,"temperature":0.2,"stopSequences":["END"]},
	"contents":[
	 {"role":"user","parts":[{"text":"Weather in Paris?"}]},
	 {"role":"model","parts":[{"text":"Checking."},{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]},
	 {"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"temp_c":21}}},{"text":"And tomorrow?"}]}],
	"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Current weather","parametersJsonSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}],
	"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}}}`
	pt.SameJSON(t, want, body)
}

func TestEncode(t *testing.T) {
	user := []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hi"}}}}
	extra := map[string]json.RawMessage{"safetySettings": json.RawMessage(`[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]`)}
	call := func(extra string) []provider.Message {
		tc := &provider.ToolCall{ID: "call_1", Name: "f", Arguments: json.RawMessage(`{}`)}
		if extra != "" {
			tc.Extra = map[string]json.RawMessage{"thoughtSignature": json.RawMessage(extra)}
		}
		return []provider.Message{{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartToolCall, ToolCall: tc}}}}
	}
	tests := []struct {
		name    string
		model   string
		req     provider.Request
		want    string
		wantErr bool
	}{
		{"gemini 3 replay without signature gets the sentinel", "gemini-3-pro-preview", provider.Request{Messages: call("")},
			`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]}]}`, false},
		{"a kept signature goes back unchanged", "gemini-3.1-flash", provider.Request{Messages: call(`"CiQBVKhc7"`)},
			`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":{}},"thoughtSignature":"CiQBVKhc7"}]}]}`, false},
		{"gemini 2.5 needs no signature", "models/gemini-2.5-flash", provider.Request{Messages: call("")},
			`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]}]}`, false},
		{"minimal", "", provider.Request{Messages: user}, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, false},
		{"parts the canonical form lacks pass through in their own dialect", "", provider.Request{Dialect: "gemini",
			Messages: []provider.Message{{Role: provider.RoleAssistant, Content: []provider.Part{
				{Type: "executableCode", Extra: map[string]json.RawMessage{"executableCode": json.RawMessage(`{"language":"PYTHON","code":"1+1"}`)}}}}}},
			`{"contents":[{"role":"model","parts":[{"executableCode":{"language":"PYTHON","code":"1+1"}}]}]}`, false},
		{"and are left out from another dialect", "", provider.Request{Dialect: "anthropic",
			Messages: []provider.Message{{Role: provider.RoleAssistant, Content: []provider.Part{
				{Type: "thinking", Extra: map[string]json.RawMessage{"thinking": json.RawMessage(`"hmm"`)}}}}, user[0]}},
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, false},
		{"extra passes through in its own dialect", "", provider.Request{Messages: user, Dialect: "gemini", Extra: extra},
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]}`, false},
		{"extra dropped from another dialect", "", provider.Request{Messages: user, Dialect: "openai", Extra: extra},
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, false},
		{"named tool, images, text and error results", "", provider.Request{
			ToolChoice: &provider.ToolChoice{Mode: "tool", Name: "f"},
			Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{
				{Type: provider.PartImage, Image: &provider.Image{MediaType: "image/png", Data: "iVBORw0KGgo="}},
				{Type: provider.PartToolResult, ToolResult: &provider.ToolResult{CallID: "x", Name: "f", Content: "sunny"}},
				{Type: provider.PartToolResult, ToolResult: &provider.ToolResult{CallID: "y", Name: "f", Content: "boom", IsError: true}}}}}},
			`{"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f"]}},
			"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}},
			{"functionResponse":{"name":"f","response":{"result":"sunny"}}},{"functionResponse":{"name":"f","response":{"error":"boom"}}}]}]}`, false},
		{"a result answering no call has no name", "", provider.Request{Messages: []provider.Message{{Role: provider.RoleTool,
			Content: []provider.Part{{Type: provider.PartToolResult, ToolResult: &provider.ToolResult{CallID: "nope", Content: "1"}}}}}}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := gemini.Encode(&tc.req, tc.model)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Encode = %s, want an error", body)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pt.SameJSON(t, tc.want, body)
		})
	}
}

func TestChat(t *testing.T) {
	up := pt.NewUpstream(t, pt.Reply(200, okBody))
	req := pt.ToolConversation()
	req.Model = "models/gemini-2.5-flash"
	resp, err := newAdapter(up.URL).Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := &provider.Response{ID: "mO2kaP6yKo", Provider: "gemini", Model: "gemini-2.5-flash",
		Text: "Let me check.", FinishReason: provider.FinishToolCalls,
		ToolCalls: []provider.ToolCall{{ID: "call_0", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`),
			Extra: map[string]json.RawMessage{"thoughtSignature": json.RawMessage(`"CiQBVKhc7"`)}}},
		Usage: provider.Usage{InputTokens: 40, OutputTokens: 30, ReasoningTokens: 18}}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	got := up.Last()
	if got.Path != "/v1beta/models/gemini-2.5-flash:generateContent" || got.RawQuery != "" ||
		got.Header.Get("x-goog-api-key") != "AIzaSyD4kT9xQw2LmN7pRb3VcZ8sHf1JgY6uE0a" || got.Header.Get("Authorization") != "" {
		t.Errorf("request %s?%s %v", got.Path, got.RawQuery, got.Header)
	}
}

func TestStream(t *testing.T) {
	base := pt.Assembled{ID: "r1", Model: "gemini-2.5-flash"}
	full := base
	full.Text, full.FinishReason, full.Usage = "Hello, Paris.", provider.FinishToolCalls, provider.Usage{InputTokens: 9, OutputTokens: 6}
	full.ToolCalls = []provider.ToolCall{{ID: "call_0", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`),
		Extra: map[string]json.RawMessage{"thoughtSignature": json.RawMessage(`"Sig1"`)}}}
	text := base
	text.Text = "Hello, Paris."
	tests := []pt.StreamCase{
		{Name: "text, function call, finish with usage", Stream: streamHead + streamText + streamTool + streamLast, Want: full},
		{Name: "truncated after text", Stream: streamHead + streamText, Want: text, Class: classify.Network, After: true},
		{Name: "truncated inside an event", Stream: streamHead + streamText + `data: {"candidates": [{"content": {"pa`, Want: text, Class: classify.Network, After: true},
		{Name: "error event after text", Stream: streamHead + streamText +
			event(`{"error": {"code": 503,"message": "The model is overloaded. Please try again later.","status": "UNAVAILABLE"}}`),
			Want: text, Class: classify.Overloaded, After: true},
		{Name: "prompt blocked", Stream: event(`{"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},"usageMetadata": {"promptTokenCount": 9,"totalTokenCount": 9},"modelVersion": "gemini-2.5-flash"}`),
			Want: pt.Assembled{}, Class: classify.ContentFiltered},
	}
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			up := pt.NewUpstream(t, pt.SSE(tc.Stream))
			st, err := newAdapter(up.URL).Stream(context.Background(), pt.ToolConversation())
			if err != nil {
				t.Fatal(err)
			}
			if got := up.Last(); got.Path != "/v1beta/models/m-1:streamGenerateContent" || got.RawQuery != "alt=sse" {
				t.Errorf("stream url %s?%s", got.Path, got.RawQuery)
			}
			tc.Check(t, st)
		})
	}
}

func TestPromptBlocked(t *testing.T) {
	up := pt.NewUpstream(t, pt.Reply(200, `{"promptFeedback":{"blockReason":"SAFETY","safetyRatings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH"}]},"usageMetadata":{"promptTokenCount":8,"totalTokenCount":8},"modelVersion":"gemini-2.5-flash"}`))
	_, err := newAdapter(up.URL).Chat(context.Background(), pt.ToolConversation())
	if pe := provider.AsError(err); pe == nil || pe.Verdict.Class != classify.ContentFiltered {
		t.Fatalf("err = %v, want a content_filtered *provider.Error", err)
	}
}

func TestSuite(t *testing.T) {
	pt.Suite{New: newAdapter, StreamHead: streamHead, Errors: errorCases}.Run(t)
}

// errorCases are the Gemini API's documented errors
// (ai.google.dev/gemini-api/docs/troubleshooting, /work/shared/provider-errors.md).
var errorCases = []pt.ErrorCase{
	{Name: "429 per-day quota", Status: 429, Body: `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 20, model: gemini-2.5-flash\nPlease retry in 36.429760048s.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-flash"},"quotaValue":"20"}]},{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"36s"}]}}`, Want: classify.QuotaExhausted},
	{Name: "429 per-minute", Status: 429, Body: `{"error":{"code":429,"message":"You exceeded your current quota.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, model: gemini-2.5-flash\nPlease retry in 26.1s.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaValue":"10"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"26s"}]}}`, Want: classify.RateLimited},
	{Name: "400 bad key", Status: 400, Body: `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`, Want: classify.Auth},
	{Name: "403 suspended key", Status: 403, Body: `{"error":{"code":403,"message":"Permission denied: Consumer 'api_key:AIza' has been suspended.","status":"PERMISSION_DENIED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"CONSUMER_SUSPENDED","domain":"googleapis.com"}]}}`, Want: classify.Permission},
	{Name: "404 model", Status: 404, Body: `{"error":{"code":404,"message":"models/gemini-9 is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.","status":"NOT_FOUND"}}`, Want: classify.NotFound},
	{Name: "400 token overflow", Status: 400, Body: `{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`, Want: classify.ContextLengthExceeded},
	{Name: "400 invalid", Status: 400, Body: `{"error":{"code":400,"message":"* GenerateContentRequest.contents: contents is not specified\n","status":"INVALID_ARGUMENT"}}`, Want: classify.InvalidRequest},
	{Name: "402 prepay", Status: 402, Body: `{"error":{"code":402,"message":"Your prepayment credits are depleted. Please add more credits.","status":"RESOURCE_EXHAUSTED"}}`, Want: classify.QuotaExhausted},
	{Name: "500 internal", Status: 500, Body: `{"error":{"code":500,"message":"An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting","status":"INTERNAL"}}`, Want: classify.ServerError},
	{Name: "503 overloaded", Status: 503, Body: `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`, Want: classify.Overloaded},
	{Name: "504 deadline", Status: 504, Body: `{"error":{"code":504,"message":"Deadline expired before operation could complete.","status":"DEADLINE_EXCEEDED"}}`, Want: classify.Timeout},
}

// TestUnencodable: a request Gemini cannot take (a tool result naming no
// earlier call) is an invalid_request *provider.Error that allows fallback,
// and nothing is sent.
func TestUnencodable(t *testing.T) {
	up := pt.NewUpstream(t, pt.Reply(200, okBody))
	req := &provider.Request{Messages: []provider.Message{{Role: provider.RoleTool, Content: []provider.Part{
		{Type: provider.PartToolResult, ToolResult: &provider.ToolResult{CallID: "call_9", Content: "x"}}}}}}
	_, err := newAdapter(up.URL).Chat(context.Background(), req)
	pe := provider.AsError(err)
	if pe == nil || pe.Verdict.Class != classify.InvalidRequest || !pe.Verdict.Fallback || pe.Provider != "gemini" {
		t.Fatalf("err = %v (%+v)", err, pe)
	}
	if n := len(up.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
