package batch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/gateway"
	"github.com/llmguard/llmguard/mock"
)

// resolver resolves names as the CLI does, over the stack's routes.
func (s *stack) resolver() func(string) (string, error) {
	routes := s.eng.Routes()
	cat := &catalog.Catalog{Providers: map[string]string{"anthropic": "anthropic", "openai": "openai", "gemini": "gemini"}}
	return func(name string) (string, error) { return cat.ResolveModel(name, routes) }
}

// An OpenAI Batch API input file runs unchanged and its results come back
// in the Batch API's output format: id, custom_id, response {status_code,
// request_id, body: a chat.completion}, error; a request every target
// rejects gets its error body and status; a malformed line an error object.
func TestOpenAIBatchFile(t *testing.T) {
	sc := &mock.Scenario{Name: "one-bad", Rules: []mock.Rule{
		{Match: mock.Match{Model: "gpt-4.1-mini"}, Sequence: seq(t, "invalid_request")},
	}}
	s := newStack(t, sc, nil)
	in := writeLines(t, "batchinput.jsonl", []string{
		`{"custom_id": "request-1", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "gpt-4.1", "messages": [{"role": "system", "content": "You are a helpful assistant."},{"role": "user", "content": "Hello world!"}],"max_tokens": 1000}}`,
		`{"custom_id": "request-2", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "Summarize batch runs"}],"max_tokens": 1000}}`,
		`{"custom_id": "request-3", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "openai/gpt-4.1-mini", "messages": [{"role": "user", "content": "rejected"}]}}`,
		`{"custom_id": "request-4", "method": "POST", "url": "/v1/embeddings", "body": {"model": "text-embedding-3-small", "input": "x"}}`,
		`{"custom_id": "request-5", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "gpt-4.1", "messages": "not a list"}}`,
	})
	out := filepath.Join(t.TempDir(), "batchoutput.jsonl")
	sum := run(t, s.eng, in, out, &Config{Resolve: s.resolver(), Codec: gateway.Codec{}})
	if sum.Served != 2 || sum.Failed != 3 || sum.Format != FormatOpenAI {
		t.Fatalf("summary: %+v", sum)
	}
	var got = map[string]struct {
		ID       string `json:"id"`
		CustomID string `json:"custom_id"`
		Response *struct {
			StatusCode int    `json:"status_code"`
			RequestID  string `json:"request_id"`
			Body       struct {
				Object  string `json:"object"`
				Model   string `json:"model"`
				Choices []struct {
					Message struct {
						Role, Content string
					}
				}
				Error *struct{ Type, Message string }
			} `json:"body"`
		} `json:"response"`
		Error *struct{ Code, Message string } `json:"error"`
	}{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, out)), "\n") {
		var v = got["x"]
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(v.ID, "batch_req_") {
			t.Errorf("id %q", v.ID)
		}
		got[v.CustomID] = v
	}
	if r := got["request-1"].Response; r == nil || r.StatusCode != 200 || r.Body.Object != "chat.completion" ||
		r.Body.Model != "gpt-4.1" || !strings.Contains(r.Body.Choices[0].Message.Content, "Hello world") || r.RequestID == "" {
		t.Errorf("request-1: %+v", r)
	}
	if r := got["request-2"].Response; r == nil || r.StatusCode != 200 || !strings.Contains(r.Body.Model, "claude-sonnet-4-5") {
		t.Errorf("request-2: %+v", r)
	}
	if r := got["request-3"].Response; r == nil || r.StatusCode != 400 || r.Body.Error == nil || r.Body.Error.Type != "invalid_request_error" {
		t.Errorf("request-3: %+v", r)
	}
	for _, id := range []string{"request-4", "request-5"} {
		if e := got[id].Error; e == nil || got[id].Response != nil || !strings.HasPrefix(e.Message, "line ") {
			t.Errorf("%s: %+v", id, got[id])
		}
	}
	// The OpenAI SDK's parse of an output line ignores the llmguard object;
	// a resumed run skips what is done, in the same format.
	sum = run(t, s.eng, in, out, &Config{Resolve: s.resolver(), Codec: gateway.Codec{}})
	if sum.Skipped != 5 || sum.Served+sum.Failed != 0 {
		t.Errorf("resumed: %+v", sum)
	}
}

// An Anthropic Message Batches request file runs unchanged; results are in
// its result format: {custom_id, result: {type: succeeded, message} |
// {type: errored, error: {type: error, error: {type, message}}}}.
func TestAnthropicBatchFile(t *testing.T) {
	sc := &mock.Scenario{Name: "too-long", Rules: []mock.Rule{
		{Match: mock.Match{Model: "claude-haiku-4-5"}, Sequence: seq(t, "context_overflow")},
	}}
	s := newStack(t, sc, nil)
	in := writeLines(t, "requests.jsonl", []string{
		`{"custom_id": "my-first-request", "params": {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [{"role": "user", "content": "Hello, world"}]}}`,
		`{"custom_id": "my-second-request", "params": {"model": "anthropic/claude-haiku-4-5", "max_tokens": 1024, "messages": [{"role": "user", "content": "Hi again, friend"}]}}`,
		`{"custom_id": "my-third-request", "params": {"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": [{"type":"text","text":"Be brief."}], "messages": [{"role": "user", "content": [{"type":"text","text":"Third one"}]}]}}`,
	})
	out := filepath.Join(t.TempDir(), "results.jsonl")
	sum := run(t, s.eng, in, out, &Config{Resolve: s.resolver(), Codec: gateway.Codec{}})
	if sum.Served != 2 || sum.Failed != 1 || sum.Format != FormatAnthropic || sum.FailedByClass["context_length_exceeded"] != 1 {
		t.Fatalf("summary: %+v", sum)
	}
	type result struct {
		CustomID string `json:"custom_id"`
		Result   struct {
			Type    string `json:"type"`
			Message *struct {
				ID, Type, Role, Model string
				Content               []struct{ Type, Text string }
				StopReason            string `json:"stop_reason"`
				Usage                 struct {
					InputTokens  int `json:"input_tokens"`
					OutputTokens int `json:"output_tokens"`
				}
			} `json:"message"`
			Error *struct {
				Type  string
				Error struct{ Type, Message string }
			} `json:"error"`
		} `json:"result"`
	}
	got := map[string]result{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, out)), "\n") {
		var v result
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatal(err)
		}
		got[v.CustomID] = v
	}
	for _, id := range []string{"my-first-request", "my-third-request"} {
		m := got[id].Result.Message
		if got[id].Result.Type != "succeeded" || m == nil || m.Type != "message" || m.Role != "assistant" ||
			!strings.HasPrefix(m.ID, "msg_") || len(m.Content) == 0 || m.Content[0].Text == "" || m.Usage.OutputTokens == 0 {
			t.Errorf("%s: %+v", id, got[id].Result)
		}
	}
	if r := got["my-second-request"].Result; r.Type != "errored" || r.Error == nil || r.Error.Type != "error" ||
		r.Error.Error.Type != "invalid_request_error" || r.Error.Error.Message == "" {
		t.Errorf("my-second-request: %+v", r)
	}
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Bad input: a malformed line is recorded as failed with its line number
// and the run goes on; duplicate ids are an error before anything is sent;
// a missing results directory is one line.
func TestBadInput(t *testing.T) {
	s := newStack(t, nil, nil)
	t.Run("malformed lines", func(t *testing.T) {
		in := writeLines(t, "items.jsonl", []string{
			`{"id":"a","text":"first"}`,
			`{"id":"b","text":`,
			``,
			`{"text":"no id"}`,
			`{"id":"c"}`,
			`{"id":"d","prompt":"fourth"}`,
			`{"id":{"x":1},"text":"object id"}`,
			`{"custom_id":"e","params":{}}`,
		})
		out := filepath.Join(t.TempDir(), "results.jsonl")
		sum := run(t, s.eng, in, out, &Config{Codec: gateway.Codec{}})
		if sum.Served != 2 || sum.Failed != 5 || sum.FailedByClass[classMalformed] != 5 || sum.Left() != 0 {
			t.Fatalf("summary: %+v", sum)
		}
		want := map[float64]string{
			2: "line 2: not a JSON object",
			4: `line 4: no "id"`,
			5: `line 5: no "text", "prompt" or "messages"`,
			7: `line 7: "id" must be a string or a number`,
			8: "line 8: Anthropic Message Batches format, but the file's first line is llmguard format",
		}
		for _, r := range readResults(t, out) {
			line := r["line"].(float64)
			if w, ok := want[line]; ok {
				if r["status"] != "failed" || !strings.HasPrefix(r["error"].(string), w) {
					t.Errorf("line %v: %v, want an error starting %q", line, r, w)
				}
				delete(want, line)
			}
		}
		if len(want) > 0 {
			t.Errorf("no records for %v", want)
		}
		// A rerun records nothing twice, lines without an id included.
		sum = run(t, s.eng, in, out, nil)
		if sum.Skipped != 7 || sum.Served+sum.Failed != 0 || len(readResults(t, out)) != 7 {
			t.Errorf("rerun: %+v", sum)
		}
	})
	t.Run("duplicate ids", func(t *testing.T) {
		in := writeLines(t, "items.jsonl", []string{`{"id":"a","text":"x"}`, `{"id":"b","text":"y"}`, `{"id":"a","text":"z"}`, `{"id":"b","text":"w"}`})
		_, err := Open(in)
		if err == nil || !strings.Contains(err.Error(), `id "a" is on lines 1 and 3`) || !strings.Contains(err.Error(), "1 more") || strings.Contains(err.Error(), "\n") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		in, err := Open(writeLines(t, "items.jsonl", ownItems(1)))
		if err != nil {
			t.Fatal(err)
		}
		r, _ := New(s.eng, nil)
		out := filepath.Join(t.TempDir(), "nope", "results.jsonl")
		_, err = r.Run(t.Context(), in, out)
		if !errors.Is(err, ErrNoDir) || !strings.Contains(err.Error(), "nope") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("unknown model", func(t *testing.T) {
		in, err := Open(writeLines(t, "items.jsonl", []string{`{"id":"a","model":"nobody-1","text":"x"}`}))
		if err != nil {
			t.Fatal(err)
		}
		r, _ := New(s.eng, &Config{Resolve: s.resolver(), Codec: gateway.Codec{}})
		_, err = r.Run(t.Context(), in, filepath.Join(t.TempDir(), "results.jsonl"))
		var re *ResolveError
		if !errors.As(err, &re) || re.Line != 1 || !strings.Contains(err.Error(), `items.jsonl:1: model "nobody-1"`) {
			t.Errorf("err = %v", err)
		}
	})
}

// A bare model id in an OpenAI Batch API file is an OpenAI model, and in
// an Anthropic Message Batches file an Anthropic one, when no route serves
// it: files users already prepared run unchanged.
func TestBareModelOfTheFormat(t *testing.T) {
	s := newStack(t, nil, nil)
	for _, tt := range []struct {
		name, line, target string
	}{
		{"openai", `{"custom_id": "r1", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello"}]}}`, "openai/gpt-4o-mini"},
		{"anthropic", `{"custom_id": "r1", "params": {"model": "claude-haiku-4-5", "max_tokens": 100, "messages": [{"role": "user", "content": "Hello"}]}}`, "anthropic/claude-haiku-4-5"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := writeLines(t, "in.jsonl", []string{tt.line})
			out := filepath.Join(t.TempDir(), "out.jsonl")
			sum := run(t, s.eng, in, out, &Config{Resolve: s.resolver(), Codec: gateway.Codec{}})
			if sum.Served != 1 {
				t.Fatalf("summary: %+v", sum)
			}
			if got := readResults(t, out)[0]["llmguard"].(map[string]any)["target"]; got != tt.target {
				t.Errorf("target %v, want %s", got, tt.target)
			}
		})
	}
}
