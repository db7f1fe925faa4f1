package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/mock"
)

// A non-streaming call bounded by max_tokens is asked for as a stream
// until the target has shown its pace (eight answers), then plainly; the
// client gets the same answer either way, in its own dialect, from a
// target of its dialect or of the other.
func TestPlainAnswerAtItsPace(t *testing.T) {
	m := mock.New(nil)
	ms := httptest.NewServer(m)
	t.Cleanup(ms.Close)
	yaml := "providers:\n  anthropic: {base_url: " + ms.URL + ", api_key: test-ant-key}\n" +
		"  openai: {base_url: " + ms.URL + "/v1, api_key: test-oai-key}\n" +
		"routes:\n  ant: {targets: [anthropic/claude-sonnet-4-5]}\n  oai: {targets: [openai/gpt-4o]}\n"
	cases := []struct {
		name, path string
		body       func(route string) string
		hdr        []string
	}{
		{DialectOpenAI, "/v1/chat/completions", func(r string) string { return oaBody(r, false, `,"max_tokens":100`) }, nil},
		{DialectAnthropic, "/v1/messages", func(r string) string { return anBody(r, false, "") }, []string{"anthropic-version", "2023-06-01"}},
		{"responses", "/v1/responses", func(r string) string {
			return `{"model":"` + r + `","input":"Say hello to the gateway please","max_output_tokens":100}`
		}, nil},
	}
	for _, d := range cases {
		for _, route := range []string{"ant", "oai"} {
			t.Run(d.name+"/"+route, func(t *testing.T) {
				srv, _ := newGateway(t, yaml, ms.Client(), nil, nil)
				gw := httptest.NewServer(srv.Handler())
				t.Cleanup(gw.Close)
				m.Reset()
				var answers []string
				for i := range 9 {
					res := pipenet.Do(t, gw.Client(), http.MethodPost, gw.URL+d.path, d.body(route), d.hdr...)
					body, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if res.StatusCode != 200 {
						t.Fatalf("call %d: status %d: %s", i+1, res.StatusCode, body)
					}
					answers = append(answers, clientAnswer(t, d.name, body))
					up := m.Requests()
					if len(up) != i+1 || up[i].Stream != (i < 8) || res.Header.Get("X-Llmguard-Upstream-Request-Id") != up[i].RequestID {
						t.Fatalf("call %d: upstream %+v, x-llmguard-upstream-request-id %q; want a stream for the first eight",
							i+1, up, res.Header.Get("X-Llmguard-Upstream-Request-Id"))
					}
				}
				if answers[8] != answers[7] || !strings.HasPrefix(answers[8], "Mock answer from ") {
					t.Errorf("plain answer %q, streamed one %q", answers[8], answers[7])
				}
			})
		}
	}
}

// answerFields are what a client reads of a non-streaming answer in
// dialect: the text, the finish reason and the output tokens.
func answerFields(t *testing.T, dialect string, body []byte) (text, finish string, out float64) {
	t.Helper()
	m := decodeJSON(t, body)
	if dialect == DialectAnthropic {
		text, _ = dig(m, "content", 0, "text").(string)
		finish, _ = m["stop_reason"].(string)
		out, _ = dig(m, "usage", "output_tokens").(float64)
	} else {
		text, _ = dig(m, "choices", 0, "message", "content").(string)
		finish, _ = dig(m, "choices", 0, "finish_reason").(string)
		out, _ = dig(m, "usage", "completion_tokens").(float64)
	}
	return text, finish, out
}

// clientAnswer is answerFields in one string; for a Responses API
// answer, its output text, status and output tokens.
func clientAnswer(t *testing.T, dialect string, body []byte) string {
	t.Helper()
	if dialect == "responses" {
		m := decodeRs(t, body)
		out, _ := dig(m, "usage", "output_tokens").(float64)
		status, _ := m["status"].(string)
		return outputText(m) + " | " + status + " | " + itoa(int(out))
	}
	text, finish, out := answerFields(t, dialect, body)
	return text + " | " + finish + " | " + itoa(int(out))
}
