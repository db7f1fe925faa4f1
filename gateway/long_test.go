package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/mock"
)

// longConfig has only default policies: a 30 s header timeout, 15 s to the
// first token, 20 s of idle, 60 s for the whole call.
const longConfig = mockProviders + `routes:
  long-ant:
    targets: ["anthropic/claude-sonnet-4-5+fault=long:40"]
  long-oai:
    targets: ["openai/gpt-4o+fault=long:40"]
`

// A non-streaming answer that takes 40 s to generate arrives whole under
// the default config: the engine asks the upstream for a stream and
// assembles it, so the 30 s header timeout (which a non-streaming upstream
// answers only at the end) does not cut it, while the first-token and idle
// timeouts still watch for silence. Virtual time: the test takes no 40 s.
func TestLongAnswerNotStreamed(t *testing.T) {
	for _, d := range dialects() {
		for _, route := range []string{"long-ant", "long-oai"} {
			t.Run(d.name+"/"+route, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					m := mock.New(nil)
					t.Cleanup(m.Close)
					ms := pipenet.NewServer(m)
					t.Cleanup(ms.Close)
					srv, _ := newGateway(t, strings.ReplaceAll(longConfig, "MOCK", ms.URL), ms.Client(), nil, nil)
					gw := pipenet.NewServer(srv.Handler())
					t.Cleanup(gw.Close)
					start := time.Now()
					res := pipenet.Do(t, gw.Client(), http.MethodPost, gw.URL+d.path, d.body(route, ""), d.hdr...)
					body, _ := io.ReadAll(res.Body)
					res.Body.Close()
					took := time.Since(start)
					t.Logf("%d after %v: %s", res.StatusCode, took, body)
					if res.StatusCode != 200 {
						t.Fatalf("status %d: %s", res.StatusCode, body)
					}
					if took < 35*time.Second {
						t.Errorf("answered after %v: the answer was not long", took)
					}
					text, finish, out := answerFields(t, d.name, body)
					if !strings.HasPrefix(text, "Mock answer from ") || (finish != "stop" && finish != "end_turn") || out == 0 {
						t.Errorf("answer %q finish %q output tokens %v", text, finish, out)
					}
					up := m.Requests()
					if len(up) != 1 || !up[0].Stream || res.Header.Get("X-Llmguard-Upstream-Request-Id") != up[0].RequestID {
						t.Errorf("upstream %+v; x-llmguard-upstream-request-id %q", up, res.Header.Get("X-Llmguard-Upstream-Request-Id"))
					}
				})
			})
		}
	}
}

// asStreamed is a client's decoded non-streaming request body as the
// upstream gets it: asked for as a stream (the engine assembles the
// answer), with usage in the stream for the OpenAI dialect.
func asStreamed(body any, openai bool) any {
	m, ok := body.(map[string]any)
	if !ok || m["stream"] == true {
		return body
	}
	m["stream"] = true
	if openai {
		m["stream_options"] = map[string]any{"include_usage": true}
	}
	return m
}
