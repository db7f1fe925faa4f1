package mock

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/llmguard/llmguard/internal/sse"
)

func TestSuccess(t *testing.T) {
	_, ts := newTS(t, nil)
	paths := map[string]string{
		dialectAnthropic: "content.0.text",
		dialectOpenAI:    "choices.0.message.content",
		dialectAzure:     "choices.0.message.content",
		dialectGemini:    "candidates.0.content.parts.0.text",
	}
	modelPath := map[string]string{dialectAnthropic: "model", dialectOpenAI: "model", dialectAzure: "model", dialectGemini: "modelVersion"}
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			resp, body := do(t, ts.URL, call{api: a.name, model: a.model, text: "What is the capital of France and why is it famous?"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			want := "Mock answer from " + a.model + ": What is the capital of France and why"
			if got := jsonPath(t, body, paths[a.name]); got != want {
				t.Errorf("text = %q, want %q", got, want)
			}
			if got := jsonPath(t, body, modelPath[a.name]); got != a.model {
				t.Errorf("model = %v, want %s", got, a.model)
			}
			switch a.name {
			case dialectAnthropic:
				if rid := resp.Header.Get("request-id"); !strings.HasPrefix(rid, "req_011CMock") || len(rid) != 28 {
					t.Errorf("request-id %q", rid)
				}
				if jsonPath(t, body, "stop_reason") != "end_turn" || jsonPath(t, body, "usage.output_tokens") == nil {
					t.Errorf("body %s", body)
				}
			case dialectOpenAI, dialectAzure:
				if rid := resp.Header.Get("x-request-id"); !strings.HasPrefix(rid, "req_") || len(rid) != 36 {
					t.Errorf("x-request-id %q", rid)
				}
				if jsonPath(t, body, "choices.0.finish_reason") != "stop" || jsonPath(t, body, "usage.total_tokens") == nil {
					t.Errorf("body %s", body)
				}
			case dialectGemini:
				if jsonPath(t, body, "usageMetadata.totalTokenCount") == nil || jsonPath(t, body, "candidates.0.finishReason") != "STOP" {
					t.Errorf("body %s", body)
				}
			}
		})
	}
}

func TestAnswerText(t *testing.T) {
	tests := []struct {
		name string
		c    chat
		want string
	}{
		{"plain", chat{model: "m", text: "  hello   there  "}, "Mock answer from m: hello there"},
		{"long", chat{model: "m", text: "one two three four five six seven eight nine ten"}, "Mock answer from m: one two three four five six seven eight"},
		{"empty", chat{model: "m"}, "Mock answer from m: hello"},
		{"summary after colon", chat{model: "m", text: "Please summarize this: The meeting moved to Tuesday because the room was booked."},
			"Summary: The meeting moved to Tuesday because the room was booked.."},
		{"summary no colon", chat{model: "m", text: "Summarise the plan"}, "Summary: Summarise the plan."},
		{"tool result", chat{model: "m", text: "sunny and 21", toolResult: true}, "Mock answer from m: the tool returned: sunny and 21"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := answerText(&tt.c); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if got := strings.Join(tokens(tt.want), ""); got != tt.want {
				t.Errorf("tokens do not concatenate: %q", got)
			}
		})
	}
}

// streamResult is what a test reads from a stream.
type streamResult struct {
	names   []string // event names (Anthropic) or "data"
	text    string   // concatenated text deltas
	args    string   // concatenated tool-call argument deltas
	tool    string   // tool name
	done    bool     // the stream ended properly (message_stop / [DONE] / finishReason)
	errType string   // an in-stream error's type or status
	usage   bool     // usage seen
	readErr error
}

func readStream(t *testing.T, api string, r io.Reader) streamResult {
	t.Helper()
	var res streamResult
	rd := sse.NewReader(r)
	for {
		ev, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				res.readErr = err
			}
			return res
		}
		name := ev.Name
		if name == "" {
			name = "data"
		}
		res.names = append(res.names, name)
		if string(ev.Data) == "[DONE]" {
			res.done = true
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(ev.Data, &m); err != nil {
			t.Fatalf("event %s is not JSON: %v: %s", name, err, ev.Data)
		}
		get := func(path string) any { return jsonPath(t, ev.Data, path) }
		switch api {
		case dialectAnthropic:
			switch name {
			case "content_block_start":
				if n, ok := get("content_block.name").(string); ok {
					res.tool = n
				}
			case "content_block_delta":
				if s, ok := get("delta.text").(string); ok {
					res.text += s
				}
				if s, ok := get("delta.partial_json").(string); ok {
					res.args += s
				}
			case "message_delta":
				res.usage = get("usage.output_tokens") != nil
			case "message_stop":
				res.done = true
			case "error":
				res.errType, _ = get("error.type").(string)
			}
		case dialectOpenAI, dialectAzure:
			if e, ok := m["error"].(map[string]any); ok {
				res.errType, _ = e["type"].(string)
				continue
			}
			if s, ok := get("choices.0.delta.content").(string); ok {
				res.text += s
			}
			if s, ok := get("choices.0.delta.tool_calls.0.function.name").(string); ok {
				res.tool = s
			}
			if s, ok := get("choices.0.delta.tool_calls.0.function.arguments").(string); ok {
				res.args += s
			}
			if m["usage"] != nil {
				res.usage = true
			}
		case dialectGemini:
			if e, ok := m["error"].(map[string]any); ok {
				res.errType, _ = e["status"].(string)
				continue
			}
			if s, ok := get("candidates.0.content.parts.0.text").(string); ok {
				res.text += s
			}
			if s, ok := get("candidates.0.content.parts.0.functionCall.name").(string); ok {
				res.tool = s
				a, _ := json.Marshal(get("candidates.0.content.parts.0.functionCall.args"))
				res.args = string(a)
			}
			res.usage = get("usageMetadata.promptTokenCount") != nil
			if get("candidates.0.finishReason") == "STOP" {
				res.done = true
			}
		}
	}
}

func TestStreams(t *testing.T) {
	_, ts := newTS(t, nil)
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			resp, body := do(t, ts.URL, call{api: a.name, model: a.model, text: "Tell me a short story about a cat", stream: true})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Errorf("content-type %q", ct)
			}
			res := readStream(t, a.name, bytes.NewReader(body))
			want := "Mock answer from " + a.model + ": Tell me a short story about a cat"
			if res.text != want || !res.done || !res.usage || res.readErr != nil {
				t.Errorf("stream: text %q done %v usage %v err %v\n%s", res.text, res.done, res.usage, res.readErr, body)
			}
			if a.name == dialectAnthropic {
				n := len(res.names)
				wantNames := []string{"message_start", "content_block_start", "ping", "content_block_delta"}
				if diff := cmp.Diff(wantNames, res.names[:4]); diff != "" {
					t.Errorf("first events (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]string{"content_block_stop", "message_delta", "message_stop"}, res.names[n-3:]); diff != "" {
					t.Errorf("last events (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestGeminiStreamWithoutSSE(t *testing.T) {
	_, ts := newTS(t, nil)
	c := call{api: dialectGemini, model: "gemini-2.5-flash", text: "hi there", stream: true}
	req := c.request(ts.URL)
	req.URL.RawQuery = ""
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var chunks []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&chunks); err != nil {
		t.Fatalf("not a JSON array: %v", err)
	}
	if len(chunks) != len(tokens("Mock answer from gemini-2.5-flash: hi there")) {
		t.Errorf("%d chunks", len(chunks))
	}
}

func TestToolCalls(t *testing.T) {
	_, ts := newTS(t, nil)
	wantArgs := map[string]any{"city": "mock", "days": float64(1)}
	for _, a := range apis {
		for _, stream := range []bool{false, true} {
			for _, how := range []string{"by name", "forced"} {
				name := a.name + "/" + how
				if stream {
					name += "/stream"
				}
				t.Run(name, func(t *testing.T) {
					c := call{api: a.name, model: a.model, text: "Use get_weather for Paris", tools: true, stream: stream}
					if how == "forced" {
						c.text, c.force = "What should I wear?", "get_weather"
					}
					resp, body := do(t, ts.URL, c)
					if resp.StatusCode != 200 {
						t.Fatalf("status %d: %s", resp.StatusCode, body)
					}
					var tool, args string
					if stream {
						res := readStream(t, a.name, bytes.NewReader(body))
						tool, args = res.tool, res.args
						if !res.done {
							t.Errorf("stream not finished:\n%s", body)
						}
					} else {
						switch a.name {
						case dialectAnthropic:
							tool, _ = jsonPath(t, body, "content.0.name").(string)
							b, _ := json.Marshal(jsonPath(t, body, "content.0.input"))
							args = string(b)
							if jsonPath(t, body, "stop_reason") != "tool_use" {
								t.Errorf("stop_reason: %s", body)
							}
						case dialectGemini:
							tool, _ = jsonPath(t, body, "candidates.0.content.parts.0.functionCall.name").(string)
							b, _ := json.Marshal(jsonPath(t, body, "candidates.0.content.parts.0.functionCall.args"))
							args = string(b)
						default:
							tool, _ = jsonPath(t, body, "choices.0.message.tool_calls.0.function.name").(string)
							args, _ = jsonPath(t, body, "choices.0.message.tool_calls.0.function.arguments").(string)
							if jsonPath(t, body, "choices.0.finish_reason") != "tool_calls" {
								t.Errorf("finish_reason: %s", body)
							}
						}
					}
					if tool != "get_weather" {
						t.Errorf("tool = %q\n%s", tool, body)
					}
					var got map[string]any
					if err := json.Unmarshal([]byte(args), &got); err != nil {
						t.Fatalf("arguments %q: %v", args, err)
					}
					if diff := cmp.Diff(wantArgs, got); diff != "" {
						t.Errorf("arguments (-want +got):\n%s", diff)
					}
				})
			}
		}
		t.Run(a.name+"/no trigger", func(t *testing.T) {
			_, body := do(t, ts.URL, call{api: a.name, model: a.model, text: "Hello", tools: true})
			if !strings.Contains(string(body), "Mock answer from") {
				t.Errorf("want text answer: %s", body)
			}
		})
		t.Run(a.name+"/tool result", func(t *testing.T) {
			_, body := do(t, ts.URL, call{api: a.name, model: a.model, text: "Use get_weather for Paris", tools: true, result: true})
			if !strings.Contains(string(body), "the tool returned: sunny and 21 degrees") {
				t.Errorf("want answer from the tool result: %s", body)
			}
		})
	}
}
