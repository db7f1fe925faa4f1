// Package providertest has the fixtures the adapter tests share, and the
// tests of the packages above them that read a provider stream: an
// httptest upstream that records what it received, canned replies and SSE
// streams, Collect and Assemble, a canonical tool-using conversation, and
// the adapters' conformance Suite, Bench and FuzzDecode.
package providertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/classify"

	"github.com/llmguard/llmguard/provider"
)

// Received is one request the upstream got.
type Received struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
}

// Upstream is an httptest server on 127.0.0.1 that records every request
// and answers with Handler. It is safe for concurrent use.
type Upstream struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []Received
}

// NewUpstream starts an Upstream answering with h; it is closed when the test ends.
func NewUpstream(t testing.TB, h http.HandlerFunc) *Upstream {
	u := &Upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.reqs = append(u.reqs, Received{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
			Header: r.Header.Clone(), Body: body})
		u.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

// Requests returns what the upstream received so far.
func (u *Upstream) Requests() []Received {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Received(nil), u.reqs...)
}

// Last returns the last request received (zero when none).
func (u *Upstream) Last() Received {
	r := u.Requests()
	if len(r) == 0 {
		return Received{}
	}
	return r[len(r)-1]
}

// Reply answers with status, headers (name, value pairs) and body.
func Reply(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// SSE answers 200 with the raw event-stream text, flushed at once.
func SSE(stream string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, stream)
		w.(http.Flusher).Flush()
	}
}

// Collect reads s to its end and returns the chunks and the final error
// (io.EOF for a clean end).
func Collect(s provider.Stream) ([]provider.Chunk, error) {
	var out []provider.Chunk
	for {
		ch, err := s.Recv()
		if err != nil {
			s.Close()
			return out, err
		}
		out = append(out, ch)
	}
}

// Assembled is a stream's chunks put back together.
type Assembled struct {
	Text         string
	ToolCalls    []provider.ToolCall
	FinishReason string
	Usage        provider.Usage
	Model, ID    string
}

// Assemble joins text, tool-call fragments (by index), finish reason,
// usage, model and id of chunks.
func Assemble(chunks []provider.Chunk) Assembled {
	var a Assembled
	args := map[int]string{}
	for _, c := range chunks {
		a.Text += c.Text
		if c.Model != "" {
			a.Model = c.Model
		}
		if c.ID != "" {
			a.ID = c.ID
		}
		if c.FinishReason != "" {
			a.FinishReason = c.FinishReason
		}
		if c.Usage != nil {
			a.Usage = *c.Usage
		}
		if tc := c.ToolCall; tc != nil {
			for len(a.ToolCalls) <= tc.Index {
				a.ToolCalls = append(a.ToolCalls, provider.ToolCall{})
			}
			if tc.ID != "" {
				a.ToolCalls[tc.Index].ID = tc.ID
			}
			if tc.Name != "" {
				a.ToolCalls[tc.Index].Name = tc.Name
			}
			if tc.Extra != nil {
				a.ToolCalls[tc.Index].Extra = tc.Extra
			}
			args[tc.Index] += tc.Arguments
		}
	}
	for i := range a.ToolCalls {
		a.ToolCalls[i].Arguments = json.RawMessage(args[i])
	}
	return a
}

// ToolConversation is an agent's conversation in canonical form, as an
// OpenAI client would send it: a system prompt, a user question, an
// assistant turn calling get_weather, the tool's result (without the
// function name, as OpenAI sends it) and a follow-up question.
func ToolConversation() *provider.Request {
	temp := 0.2
	return &provider.Request{
		Model:       "m-1",
		System:      "You are terse.",
		MaxTokens:   256,
		Temperature: &temp,
		Stop:        []string{"END"},
		Messages: []provider.Message{
			{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "Weather in Paris?"}}},
			{Role: provider.RoleAssistant, Content: []provider.Part{
				{Type: provider.PartText, Text: "Checking."},
				{Type: provider.PartToolCall, ToolCall: &provider.ToolCall{ID: "call_1", Name: "get_weather",
					Arguments: json.RawMessage(`{"city":"Paris"}`)}}}},
			{Role: provider.RoleTool, Content: []provider.Part{{Type: provider.PartToolResult,
				ToolResult: &provider.ToolResult{CallID: "call_1", Content: `{"temp_c":21}`}}}},
			{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "And tomorrow?"}}},
		},
		Tools: []provider.Tool{{Name: "get_weather", Description: "Current weather",
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}},
		ToolChoice: &provider.ToolChoice{Mode: "auto"},
	}
}

// JSON decodes b into a generic value for comparisons; it fails the test
// on invalid JSON.
func JSON(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return v
}

// Server starts a plain (non-recording) httptest server for benchmarks; it
// is closed when the benchmark ends.
func Server(tb testing.TB, h http.HandlerFunc) *httptest.Server {
	s := httptest.NewServer(h)
	tb.Cleanup(s.Close)
	return s
}

// BenchmarkBareHTTP is the floor a round trip cannot go below: the same
// body and headers (name, value pairs) POSTed to the same server with the
// shared client, the reply read, with no encoding, decoding or
// classification.
func BenchmarkBareHTTP(b *testing.B, url string, body []byte, header ...string) {
	client := provider.NewHTTPClient(nil)
	b.ReportAllocs()
	for b.Loop() {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
}

// SameJSON fails t unless got is the JSON document want, compared as
// values (key order and spacing aside).
func SameJSON(t testing.TB, want string, got []byte) {
	t.Helper()
	if diff := cmp.Diff(JSON(t, []byte(want)), JSON(t, got)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}

// StreamCase is a row of an adapter's stream table: the event stream the
// upstream sends, what its chunks assemble to, and how it ends (StreamEnd's
// Class, "" for a clean io.EOF, and After).
type StreamCase struct {
	Name   string
	Stream string
	Want   Assembled
	Class  classify.Class
	After  bool
}

// Check reads st to its end and checks what its chunks assemble to (Want)
// and how it ended (StreamEnd's Class and After).
func (c StreamCase) Check(t testing.TB, st provider.Stream) {
	t.Helper()
	chunks, err := Collect(st)
	if diff := cmp.Diff(c.Want, Assemble(chunks)); diff != "" {
		t.Errorf("assembled (-want +got):\n%s", diff)
	}
	StreamEnd(t, err, c.Class, c.After)
}

// StreamEnd checks the error a stream ended with (Collect's): io.EOF when
// class is "", otherwise a *provider.Error of that class whose
// AfterFirstToken is after.
func StreamEnd(t testing.TB, err error, class classify.Class, after bool) {
	t.Helper()
	if class == "" {
		if err != io.EOF {
			t.Fatalf("end = %v, want io.EOF", err)
		}
		return
	}
	pe := provider.AsError(err)
	if pe == nil {
		t.Fatalf("end = %v, want *provider.Error", err)
	}
	if pe.Verdict.Class != class || pe.AfterFirstToken != after {
		t.Errorf("class %q after %v; want %q after %v (%v)", pe.Verdict.Class, pe.AfterFirstToken, class, after, pe)
	}
}
