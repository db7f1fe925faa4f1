package mock

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// dialect test fixtures: how to call each API.
type api struct {
	name  string
	model string
}

var apis = []api{
	{dialectAnthropic, "claude-sonnet-4-5"},
	{dialectOpenAI, "gpt-4.1"},
	{dialectAzure, "my-deployment"},
	{dialectGemini, "gemini-2.5-flash"},
}

// sleeps stands in for Config.Sleep: it records each wait the mock asks
// for and returns at once (with ctx's error once the client gave up).
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

// all is the waits asked for so far, in order.
func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.d)
}

func newTS(t *testing.T, cfg *Config) (*Server, *httptest.Server) {
	t.Helper()
	srv := New(cfg)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); ts.Close() })
	return srv, ts
}

// call is one request to the mock.
type call struct {
	api    string
	model  string
	text   string
	stream bool
	tools  bool   // declare get_weather and lookup_order
	force  string // force this tool via tool_choice
	result bool   // the last message is a tool result
	header string // X-Mock-Fault
	noKey  bool
}

func (c call) request(base string) *http.Request {
	var url string
	var body any
	msgs := []any{map[string]any{"role": "user", "content": c.text}}
	switch c.api {
	case dialectAnthropic:
		url = base + "/v1/messages"
		if c.result {
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": map[string]any{"city": "Paris"}}}},
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny and 21 degrees"}}})
		}
		m := map[string]any{"model": c.model, "max_tokens": 256, "messages": msgs, "stream": c.stream}
		if c.tools {
			m["tools"] = []any{
				map[string]any{"name": "get_weather", "input_schema": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}}, "required": []string{"city", "days"}}},
				map[string]any{"name": "lookup_order", "input_schema": map[string]any{"type": "object"}},
			}
		}
		if c.force != "" {
			m["tool_choice"] = map[string]any{"type": "tool", "name": c.force}
		}
		body = m
	case dialectOpenAI, dialectAzure:
		url = base + "/v1/chat/completions"
		if c.api == dialectAzure {
			url = base + "/openai/deployments/" + c.model + "/chat/completions?api-version=2024-10-21"
		}
		if c.result {
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}},
				map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "sunny and 21 degrees"})
		}
		m := map[string]any{"messages": msgs, "stream": c.stream}
		if c.api == dialectOpenAI {
			m["model"] = c.model
		}
		if c.stream {
			m["stream_options"] = map[string]any{"include_usage": true}
		}
		if c.tools {
			m["tools"] = []any{
				map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}}, "required": []string{"city", "days"}}}},
				map[string]any{"type": "function", "function": map[string]any{"name": "lookup_order", "parameters": map[string]any{"type": "object"}}},
			}
		}
		if c.force != "" {
			m["tool_choice"] = map[string]any{"type": "function", "function": map[string]any{"name": c.force}}
		}
		body = m
	case dialectGemini:
		method := ":generateContent"
		if c.stream {
			method = ":streamGenerateContent?alt=sse"
		}
		url = base + "/v1beta/models/" + c.model + method
		contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": c.text}}}}
		if c.result {
			contents = append(contents,
				map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"name": "get_weather", "args": map[string]any{"city": "Paris"}}}}},
				map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "get_weather", "response": map[string]any{"result": "sunny and 21 degrees"}}}}})
		}
		m := map[string]any{"contents": contents}
		if c.tools {
			m["tools"] = []any{map[string]any{"functionDeclarations": []any{
				map[string]any{"name": "get_weather", "parameters": map[string]any{"type": "OBJECT", "properties": map[string]any{"city": map[string]any{"type": "STRING"}, "days": map[string]any{"type": "INTEGER"}}, "required": []string{"city", "days"}}},
				map[string]any{"name": "lookup_order"},
			}}}
		}
		if c.force != "" {
			m["toolConfig"] = map[string]any{"functionCallingConfig": map[string]any{"mode": "ANY", "allowedFunctionNames": []string{c.force}}}
		}
		body = m
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if !c.noKey {
		switch c.api {
		case dialectAnthropic:
			req.Header.Set("x-api-key", "sk-ant-test-key-1234")
			req.Header.Set("anthropic-version", "2023-06-01")
		case dialectAzure:
			req.Header.Set("api-key", "azure-test-key-1234")
		case dialectGemini:
			req.Header.Set("x-goog-api-key", "AIza-test-key-1234")
		default:
			req.Header.Set("Authorization", "Bearer sk-test-key-1234")
		}
	}
	if c.header != "" {
		req.Header.Set(FaultHeader, c.header)
	}
	return req
}

// do sends c and returns the response with its body read.
func do(t *testing.T, base string, c call) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(c.request(base))
	if err != nil {
		t.Fatalf("%s: %v", c.api, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: read body: %v", c.api, err)
	}
	return resp, b
}

// jsonPath digs into decoded JSON with a dotted path ("error.type", "choices.0.message").
func jsonPath(t *testing.T, body []byte, path string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, body)
	}
	return valueAt(v, path)
}

// valueAt walks a decoded JSON value by a dotted path of object keys and
// array indexes ("choices.0.delta.content"); nil where the path leads
// nowhere.
func valueAt(v any, path string) any {
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			var i int
			fmt.Sscan(p, &i)
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// waitFor polls cond every millisecond until it holds, failing t after 10
// seconds; what says what was awaited.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
