package batch

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/anthropic"
	"github.com/llmguard/llmguard/provider/gemini"
	"github.com/llmguard/llmguard/provider/openai"
	"github.com/llmguard/llmguard/resilience"
)

// stack is an engine over the mock on loopback: route "default" is
// anthropic/claude-sonnet-4-5 then openai/gpt-4.1.
type stack struct {
	mock *mock.Server
	url  string
	eng  *resilience.Engine
}

func newStack(t testing.TB, sc *mock.Scenario, route *resilience.Route) *stack {
	t.Helper()
	m := mock.New(&mock.Config{Scenario: sc})
	ts := httptest.NewServer(m)
	t.Cleanup(ts.Close)
	return newStackOn(t, m, ts.URL, ts.Client(), route)
}

// newBubbleStack is newStack for a testing/synctest bubble: the mock
// speaks HTTP over in-memory pipes (a goroutine blocked on a loopback
// socket would stop the bubble's clock), so backoffs and pauses take
// virtual time.
func newBubbleStack(t testing.TB, sc *mock.Scenario, route *resilience.Route) *stack {
	t.Helper()
	m := mock.New(&mock.Config{Scenario: sc})
	srv := pipenet.NewServer(m)
	t.Cleanup(func() { m.Close(); srv.Close() })
	return newStackOn(t, m, srv.URL, srv.Client(), route)
}

// newStackOn builds the engine over a mock served at url through client.
func newStackOn(t testing.TB, m *mock.Server, url string, client *http.Client, route *resilience.Route) *stack {
	t.Helper()
	if route == nil {
		route = &resilience.Route{}
	}
	if len(route.Targets) == 0 {
		route.Targets = []resilience.Target{{Name: "anthropic/claude-sonnet-4-5"}, {Name: "openai/gpt-4.1"}}
	}
	adapters := map[string]provider.Adapter{
		"anthropic": anthropic.New(&anthropic.Config{BaseURL: url, APIKey: "k", Client: client}),
		"openai":    openai.New(&openai.Config{BaseURL: url + "/v1", APIKey: "k", Client: client}),
		"gemini":    gemini.New(&gemini.Config{BaseURL: url, APIKey: "k", Client: client}),
	}
	eng, err := resilience.New(&resilience.Options{Routes: map[string]resilience.Route{"default": *route},
		Adapters: adapters, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return &stack{mock: m, url: url, eng: eng}
}

// writeLines writes lines as a file in a temporary directory.
func writeLines(t testing.TB, name string, lines []string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// ownItems is n lines of llmguard's format, ids doc-1…doc-n.
func ownItems(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"id":"doc-%d","text":"document number %d is about batch runs"}`, i+1, i+1)
	}
	return lines
}

// readResults decodes every line of a results file.
func readResults(t testing.TB, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// idsOf counts the records of each id (custom_id in the API formats).
func idsOf(recs []map[string]any) map[string]int {
	n := map[string]int{}
	for _, r := range recs {
		id, _ := r["custom_id"].(string)
		if id == "" {
			id, _ = r["id"].(string)
		}
		n[id]++
	}
	return n
}

// events records a run's events.
type events struct {
	mu  sync.Mutex
	evs []Event
}

func (e *events) add(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evs = append(e.evs, ev)
}

func (e *events) of(kind EventKind) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Event
	for _, ev := range e.evs {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// run runs in through eng with cfg into out.
func run(t testing.TB, eng Engine, in string, out string, cfg *Config) *Summary {
	t.Helper()
	input, err := Open(in)
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(eng, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background(), input, out)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}
