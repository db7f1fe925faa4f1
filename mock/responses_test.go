package mock

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/internal/pipenet"
)

func postResponses(t *testing.T, url, body string, hdr ...string) *http.Response {
	t.Helper()
	return postTo(t, url+"/v1/responses", body, hdr...)
}

// postTo posts body to url with a test key and the headers hdr (name,
// value pairs).
func postTo(t *testing.T, url, body string, hdr ...string) *http.Response {
	t.Helper()
	return pipenet.Do(t, http.DefaultClient, http.MethodPost, url, body, append([]string{"Authorization", "Bearer sk-test-1234"}, hdr...)...)
}

// respEvents reads a Responses API stream: each event's name and data.
func respEvents(t *testing.T, r io.Reader) (names []string, data []map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(line[len("data: "):]), &m); err != nil {
				t.Fatalf("event %s: %v", name, err)
			}
			if m["type"] != name {
				t.Errorf("event name %q, data type %v", name, m["type"])
			}
			if m["sequence_number"] != float64(len(data)) {
				t.Errorf("event %d sequence_number %v", len(data), m["sequence_number"])
			}
			names, data = append(names, name), append(data, m)
		}
	}
	return names, data
}

func TestResponsesAPI(t *testing.T) {
	_, ts := newTS(t, nil)
	tools := `,"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"strict":true}]`

	t.Run("text", func(t *testing.T) {
		res := postResponses(t, ts.URL, `{"model":"gpt-4.1","instructions":"be brief","input":"Say hello to the mock"}`)
		defer res.Body.Close()
		var m struct {
			ID, Object, Status, Model string
			Output                    []struct {
				Type, ID, Role string
				Content        []struct{ Type, Text string }
			}
			Usage struct{ InputTokens, OutputTokens int } `json:"usage"`
		}
		if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 200 || m.Object != "response" || m.Status != "completed" || m.Model != "gpt-4.1" ||
			!strings.HasPrefix(m.ID, "resp_") || len(m.Output) != 1 || m.Output[0].Type != "message" ||
			m.Output[0].Content[0].Text != "Mock answer from gpt-4.1: Say hello to the mock" {
			t.Errorf("%d %+v", res.StatusCode, m)
		}
		if res.Header.Get("X-Request-Id") == "" {
			t.Error("no x-request-id")
		}
	})
	t.Run("function call and its output", func(t *testing.T) {
		res := postResponses(t, ts.URL, `{"model":"gpt-4.1","input":[{"role":"user","content":[{"type":"input_text","text":"weather in Paris?"}]}],"tool_choice":"required"`+tools+`}`)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var m struct {
			Output []struct{ Type, CallID, Name, Arguments string } `json:"output"`
		}
		json.Unmarshal(b, &m)
		if len(m.Output) != 1 || m.Output[0].Type != "function_call" || m.Output[0].Name != "get_weather" || m.Output[0].Arguments != `{"city":"mock"}` {
			t.Fatalf("%s", b)
		}
		res = postResponses(t, ts.URL, `{"model":"gpt-4.1","input":[{"role":"user","content":"weather?"},{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"sunny"}]`+tools+`}`)
		b, _ = io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(b), "the tool returned: sunny") {
			t.Errorf("%s", b)
		}
	})
}

func TestResponsesAPIStream(t *testing.T) {
	_, ts := newTS(t, nil)
	tools := `,"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"strict":true}]`
	t.Run("stream", func(t *testing.T) {
		res := postResponses(t, ts.URL, `{"model":"gpt-4.1","stream":true,"input":"one two three"}`)
		defer res.Body.Close()
		names, data := respEvents(t, res.Body)
		want := "response.created response.in_progress response.output_item.added response.content_part.added " +
			strings.Repeat("response.output_text.delta ", 7) +
			"response.output_text.done response.content_part.done response.output_item.done response.completed"
		if strings.Join(names, " ") != want {
			t.Errorf("events\n%s\nwant\n%s", strings.Join(names, " "), want)
		}
		last := data[len(data)-1]
		if valueAt(last, "response.output.0.content.0.text") != "Mock answer from gpt-4.1: one two three" {
			t.Errorf("completed: %v", last)
		}
	})
	t.Run("stream function call", func(t *testing.T) {
		res := postResponses(t, ts.URL, `{"model":"gpt-4.1","stream":true,"input":"get_weather please"`+tools+`}`)
		defer res.Body.Close()
		names, data := respEvents(t, res.Body)
		want := "response.created response.in_progress response.output_item.added response.function_call_arguments.delta response.function_call_arguments.delta response.function_call_arguments.done response.output_item.done response.completed"
		if strings.Join(names, " ") != want {
			t.Errorf("events %s", strings.Join(names, " "))
		}
		if valueAt(data[2], "item.id") != valueAt(data[3], "item_id") || valueAt(data[2], "item.call_id") == "" {
			t.Errorf("item ids: %v / %v", data[2], data[3])
		}
	})
	t.Run("faults", func(t *testing.T) {
		res := postResponses(t, ts.URL, `{"model":"gpt-4.1","input":"hi"}`, FaultHeader, "429")
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 429 || !strings.Contains(string(b), "rate_limit_exceeded") {
			t.Errorf("%d %s", res.StatusCode, b)
		}
		res = postResponses(t, ts.URL, `{"model":"gpt-4.1+fault=midstream:2","stream":true,"input":"one two three"}`)
		names, data := respEvents(t, res.Body)
		res.Body.Close()
		if n := len(names); n == 0 || names[n-1] != "error" || valueAt(data[n-1], "code") != "server_error" {
			t.Errorf("midstream: %v", names)
		}
	})
}

func TestEmbeddings(t *testing.T) {
	srv, ts := newTS(t, nil)
	post := func(path, body string, hdr ...string) (int, map[string]any) {
		res := postTo(t, ts.URL+path, body, append([]string{"X-Goog-Api-Key", "AIzaTest1234"}, hdr...)...)
		defer res.Body.Close()
		var m map[string]any
		json.NewDecoder(res.Body).Decode(&m)
		return res.StatusCode, m
	}
	code, m := post("/v1/embeddings", `{"model":"text-embedding-3-small","input":["hello","world"]}`)
	v0, _ := valueAt(m, "data.0.embedding").([]any)
	if code != 200 || len(v0) != 1536 || valueAt(m, "data.1.index") != 1.0 || valueAt(m, "usage.prompt_tokens") == nil {
		t.Fatalf("%d %v", code, len(v0))
	}
	_, again := post("/v1/embeddings", `{"model":"text-embedding-3-small","input":"hello","dimensions":8}`)
	if v, _ := valueAt(again, "data.0.embedding").([]any); len(v) != 8 {
		t.Errorf("dimensions 8: %d", len(v))
	}
	_, b64 := post("/v1/embeddings", `{"model":"text-embedding-3-small","input":"hello","dimensions":4,"encoding_format":"base64"}`)
	if s, _ := valueAt(b64, "data.0.embedding").(string); len(s) != 24 {
		t.Errorf("base64: %v", valueAt(b64, "data.0.embedding"))
	}
	code, g := post("/v1beta/models/gemini-embedding-001:batchEmbedContents", `{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"hello"}]},"outputDimensionality":768}]}`)
	if gv, _ := valueAt(g, "embeddings.0.values").([]any); code != 200 || len(gv) != 768 {
		t.Errorf("gemini %d %v", code, len(gv))
	}
	code, _ = post("/v1/embeddings", `{"model":"text-embedding-3-small","input":"x"}`, FaultHeader, "429")
	if code != 429 {
		t.Errorf("fault: %d", code)
	}
	code, _ = post("/v1/embeddings", `{"model":"text-embedding-3-small"}`)
	if code != 400 {
		t.Errorf("no input: %d", code)
	}
	if reqs := srv.Requests(); reqs[0].Endpoint != "embeddings" || reqs[0].Model != "text-embedding-3-small" {
		t.Errorf("log %+v", reqs[0])
	}
}
