package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/test/harness"
)

// serveConfig is what a user writes to put Claude Code behind llmguard:
// its model names go to the anthropic provider.
const serveConfig = `
providers:
  anthropic: {base_url: MOCK, api_key: sk-ant-upstream-test}
default_provider: anthropic
`

// gatewayKey is the key Claude Code sends (ANTHROPIC_API_KEY) and the
// gateway accepts (LLMGUARD_GATEWAY_KEYS).
const gatewayKey = "sk-gw-claude-code-0001"

// models are the ways the tests run Claude Code: its default model (which
// sends system messages inside messages) and Sonnet 4.5 without tools
// (whose system text goes into the user message; no tools, because the
// mock calls any tool whose name appears in the last user message).
var models = []struct {
	name string
	args []string
}{
	{"default-model", nil},
	{"sonnet-4-5", []string{"--model", "claude-sonnet-4-5", "--tools", ""}},
}

// claudeStack is Claude Code's view of llmguard: a recorder (which counts
// the statuses the gateway returned) in front of the built `llmguard
// serve` in front of the mock running scenario.
type claudeStack struct {
	mock *mock.Server
	rec  *recorder
}

func startClaudeStack(t *testing.T, scenario string) *claudeStack {
	t.Helper()
	sc, ok := mock.Builtin(scenario)
	if !ok {
		t.Fatalf("no mock scenario %q", scenario)
	}
	m, murl := harness.StartMock(t, &mock.Config{Scenario: sc})
	srv := harness.Serve(t, harness.Binary(t), serveConfig, murl, "LLMGUARD_GATEWAY_KEYS="+gatewayKey)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("llmguard serve log:\n%s", srv.Log.String())
		}
	})
	return &claudeStack{mock: m, rec: newRecorder(t, srv.URL)}
}

// statuses lists the statuses of exchanges.
// sayHello runs Claude Code's "Say hello" through a stack on the mock's
// scenario and checks that it answers with the mock's answer; it returns
// the stack and the gateway's exchanges.
func sayHello(t *testing.T, claude, scenario string, args ...string) (*claudeStack, []exchange) {
	t.Helper()
	st := startClaudeStack(t, scenario)
	res, _ := newWorkspace(t).run(t, claude, st.rec, st.rec.URL, gatewayKey, 60*time.Second, "Say hello", args...)
	ex := st.rec.take()
	if res.IsError || !strings.HasPrefix(res.Result, "Mock answer from claude-") {
		t.Errorf("result %+v, want the mock's answer; gateway statuses %v", res, statuses(ex))
	}
	return st, ex
}

func statuses(ex []exchange) []int {
	out := make([]int, len(ex))
	for i, e := range ex {
		out[i] = e.Status
	}
	return out
}

// upstream lists the mock's generation requests as "status fault".
func (s *claudeStack) upstream() []string {
	var out []string
	for _, r := range s.mock.Requests() {
		if r.Endpoint == "generate" {
			out = append(out, fmt.Sprintf("%d %s", r.Status, r.Fault))
		}
	}
	return out
}

// TestClaudeCode runs Claude Code through `llmguard serve` in front of the
// mock: it answers on a healthy mock, runs a tool and answers its result,
// and answers through an overload burst (the gateway absorbs the 529s).
func TestClaudeCode(t *testing.T) {
	claude, _ := claudeBinary(t)
	for _, md := range models {
		t.Run(md.name, func(t *testing.T) {
			t.Run("healthy", func(t *testing.T) {
				t.Parallel()
				st, ex := sayHello(t, claude, "healthy", md.args...)
				for _, e := range ex {
					if e.Status != 200 {
						t.Errorf("%s %s: gateway answered %d", e.Method, e.URI, e.Status)
					}
				}
				// Upstream gets the gateway's key, never the one Claude Code sent.
				for _, r := range st.mock.Requests() {
					if r.Key != "…test" {
						t.Errorf("upstream request %s %s carried key %q, want the provider's (…test)", r.Method, r.Path, r.Key)
					}
				}
			})
			// With Sonnet the user message names the tools, so the mock
			// would call one on every turn: the round trip is the default
			// model's.
			if md.args == nil {
				t.Run("tool-round-trip", func(t *testing.T) {
					t.Parallel()
					st := startClaudeStack(t, "healthy")
					ws := newWorkspace(t)
					if err := os.WriteFile(filepath.Join(ws.dir, "notes.txt"), []byte("hello notes\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					res, _ := ws.run(t, claude, st.rec, st.rec.URL, gatewayKey, 60*time.Second, "Please read notes.txt", "--tools", "Read", "--max-turns", "3")
					ex := st.rec.take()
					if res.IsError || res.NumTurns != 2 || !strings.Contains(res.Result, "the tool returned") {
						t.Errorf("result %+v, want the mock's answer to the Read tool's result on turn 2; gateway statuses %v", res, statuses(ex))
					}
					if got := statuses(ex); len(got) != 2 || got[0] != 200 || got[1] != 200 {
						t.Errorf("gateway statuses %v, want 200 for the tool call and for the answer", got)
					}
				})
			}
			t.Run("overload-burst", func(t *testing.T) {
				t.Parallel()
				st, ex := sayHello(t, claude, "overload-burst", md.args...)
				if got := statuses(ex); len(got) != 1 || got[0] != 200 {
					t.Errorf("gateway statuses %v, want one 200 (the gateway absorbs the burst)", got)
				}
				up := st.upstream()
				want := []string{"529 overloaded", "529 overloaded", "529 overloaded", "200 ok"}
				if strings.Join(up, ",") != strings.Join(want, ",") {
					t.Errorf("upstream attempts %q, want %q", up, want)
				}
				t.Logf("upstream attempts: %d (%s)", len(up), strings.Join(up, ", "))
			})
		})
	}
}
