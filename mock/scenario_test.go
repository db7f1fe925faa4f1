package mock

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// statuses sends n requests of c and returns the statuses (0 for a
// connection error).
func statuses(t *testing.T, base string, c call, n int) []int {
	t.Helper()
	var out []int
	for range n {
		resp, err := http.DefaultClient.Do(c.request(base))
		if err != nil {
			out = append(out, 0)
			continue
		}
		resp.Body.Close()
		out = append(out, resp.StatusCode)
	}
	return out
}

func TestBuiltinScenarios(t *testing.T) {
	type first map[string][]int // dialect → statuses of the first requests
	tests := []struct {
		name   string
		stream bool
		want   first
	}{
		{"healthy", false, first{dialectAnthropic: {200, 200}, dialectOpenAI: {200, 200}, dialectGemini: {200, 200}}},
		{"overload-burst", false, first{dialectAnthropic: {529, 529, 529, 200, 200}, dialectOpenAI: {503, 503, 503, 200}, dialectAzure: {503, 503, 503, 200}, dialectGemini: {503, 503, 503, 200}}},
		{"quota-empty", false, first{dialectAnthropic: {400, 400}, dialectOpenAI: {429, 429}, dialectGemini: {429, 429}}},
		{"bad-key", false, first{dialectAnthropic: {401, 401}, dialectOpenAI: {401}, dialectAzure: {401}, dialectGemini: {400, 400}}},
		{"gemini-daily-quota", false, first{dialectGemini: {429, 429}, dialectAnthropic: {200}, dialectOpenAI: {200}}},
		{"midstream-error", false, first{dialectAnthropic: {200}, dialectOpenAI: {200}, dialectGemini: {200}}},
		{"outage", false, first{dialectAnthropic: {500}, dialectOpenAI: {500}, dialectGemini: {500}}},
		{"brief-outage", false, first{dialectAnthropic: {200, 200}, dialectGemini: {200}}}, // the outage starts 1s in
		{"mixed", false, first{dialectGemini: {429, 429}}},
		// With seed 1: the first draws of the rate and flaky scenarios.
		{"rate-limited", false, first{dialectOpenAI: {429, 200, 200, 200, 200, 200, 200, 200}}},
		{"flaky-network", false, first{dialectAnthropic: {200, 200, 200, 200, 200, 502, 0, 200, 502, 502, 200, 200, 0, 200, 200, 200}}},
	}
	models := map[string]string{}
	for _, a := range apis {
		models[a.name] = a.model
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, ok := Builtin(tt.name)
			if !ok {
				t.Fatalf("no built-in %q", tt.name)
			}
			if sc.Description == "" {
				t.Error("no description")
			}
			_, ts := newTS(t, &Config{Scenario: sc, Sleep: noSleep})
			for api, want := range tt.want {
				got := statuses(t, ts.URL, call{api: api, model: models[api], text: "hi", stream: tt.stream}, len(want))
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", api, diff)
				}
			}
		})
	}
	t.Run("midstream-error streams", func(t *testing.T) {
		sc, _ := Builtin("midstream-error")
		_, ts := newTS(t, &Config{Scenario: sc})
		resp, body := do(t, ts.URL, call{api: dialectAnthropic, model: "claude-sonnet-4-5", text: "a b c d e", stream: true})
		res := readStream(t, dialectAnthropic, strings.NewReader(string(body)))
		if resp.StatusCode != 200 || res.errType != "overloaded_error" || res.text != "Mock answer from" {
			t.Errorf("status %d err %q text %q", resp.StatusCode, res.errType, res.text)
		}
	})
	t.Run("slow", func(t *testing.T) {
		sc, _ := Builtin("slow")
		var s sleeps
		_, ts := newTS(t, &Config{Scenario: sc, Sleep: s.sleep})
		if got := statuses(t, ts.URL, call{api: dialectGemini, model: "g", text: "hi"}, 2); !cmp.Equal(got, []int{200, 200}) {
			t.Errorf("statuses %v", got)
		}
		if slept := s.all(); !cmp.Equal(slept, []time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond}) {
			t.Errorf("latency %v", slept)
		}
	})
	t.Run("bad-key models", func(t *testing.T) {
		sc, _ := Builtin("bad-key")
		_, ts := newTS(t, &Config{Scenario: sc})
		req, _ := http.NewRequest("GET", ts.URL+"/v1/models", nil)
		req.Header.Set("x-api-key", "sk-ant-whatever")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("models status %d", resp.StatusCode)
		}
	})
	for _, name := range BuiltinNames() {
		if _, ok := Builtin(name); !ok {
			t.Errorf("BuiltinNames lists %q but Builtin does not know it", name)
		}
	}
}

func noSleep(context.Context, time.Duration) error { return nil }

// TestTimedRules checks after/for/every on a fake clock: brief-outage is
// healthy for 1s, answers 500 for 3s, is healthy again, and repeats every
// 30s; Reset restarts the clock.
func TestTimedRules(t *testing.T) {
	sc, _ := Builtin("brief-outage")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	srv, ts := newTS(t, &Config{Scenario: sc, Now: func() time.Time { return now }})
	c := call{api: dialectOpenAI, model: "gpt-4.1", text: "hi"}
	for _, tt := range []struct {
		at   time.Duration
		want int
	}{{0, 200}, {999 * time.Millisecond, 200}, {time.Second, 500}, {3999 * time.Millisecond, 500}, {4 * time.Second, 200},
		{30 * time.Second, 200}, {31 * time.Second, 500}, {34 * time.Second, 200}} {
		now = t0.Add(tt.at)
		if got := statuses(t, ts.URL, c, 1); got[0] != tt.want {
			t.Errorf("at %v: status %d, want %d", tt.at, got[0], tt.want)
		}
	}
	now = t0.Add(62 * time.Second) // 2s into the third cycle: an outage
	srv.Reset()                    // now 0s into a fresh start: healthy
	if got := statuses(t, ts.URL, c, 1); got[0] != 200 {
		t.Errorf("after Reset: status %d, want 200", got[0])
	}
}

func TestModels(t *testing.T) {
	_, ts := newTS(t, nil)
	tests := []struct {
		name, path, header, value, field string
	}{
		{"anthropic", "/v1/models", "x-api-key", "sk-ant-1234567", "data.0.display_name"},
		{"openai", "/v1/models", "Authorization", "Bearer sk-1234567", "object"},
		{"gemini", "/v1beta/models", "x-goog-api-key", "AIza1234567", "models.0.name"},
		{"azure", "/openai/models", "api-key", "az-1234567", "data.0.id"},
		{"compatible", "/deepseek/models", "Authorization", "Bearer sk-1234567", "object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", ts.URL+tt.path, nil)
			req.Header.Set(tt.header, tt.value)
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var v any
			json.NewDecoder(resp.Body).Decode(&v)
			b, _ := json.Marshal(v)
			if resp.StatusCode != 200 || jsonPath(t, b, tt.field) == nil {
				t.Errorf("status %d body %s", resp.StatusCode, b)
			}
		})
	}
}

func TestParseScenario(t *testing.T) {
	sc, err := ParseScenario([]byte(`
name: mixed
seed: 7
rules:
  - match: {provider: anthropic, model: "claude-*", stream: false}
    sequence: "529,529,200"
  - match: {provider: openai}
    fault: "429:2"
    rate: 0.3
    faults:
      - {fault: reset, rate: 0.1}
    latency: {median: 80ms, p99: 1s}
    per: model
  - match: {endpoint: any}
    sequence: [401, ok]
    repeat: true
`))
	if err != nil {
		t.Fatal(err)
	}
	f := false
	want := &Scenario{Name: "mixed", Seed: 7, Rules: []Rule{
		{Match: Match{Provider: "anthropic", Model: "claude-*", Stream: &f},
			Sequence: []Step{{Kind: KindOverloaded, Status: 529}, {Kind: KindOverloaded, Status: 529}, {Kind: KindOK}}},
		{Match: Match{Provider: "openai"}, Per: "model",
			Faults:  []Weighted{{Step{Kind: KindRateLimit, Status: 429, Arg: 2, HasArg: true}, 0.3}, {Step{Kind: KindReset}, 0.1}},
			Latency: Latency{Median: 80e6, P99: 1e9}},
		{Match: Match{Endpoint: "any"}, Repeat: true, Sequence: []Step{{Kind: KindBadKey, Status: 401}, {Kind: KindOK}}},
	}}
	if diff := cmp.Diff(want, sc); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	js, err := ParseScenario([]byte(`{"name":"j","rules":[{"sequence":[529,200]}]}`))
	if err != nil || len(js.Rules) != 1 || len(js.Rules[0].Sequence) != 2 {
		t.Errorf("JSON scenario: %+v %v", js, err)
	}
}

func TestParseScenarioErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"unknown field", "rules:\n  - sequnce: [529]\n", `unknown field "sequnce"`},
		{"bad step", "rules:\n  - sequence: [529, 52x]\n", `rules[0].sequence[1]: unknown fault "52x"`},
		{"bad step string", "rules:\n  - sequence: \"529,,200\"\n", `rules[0].sequence[1]: empty step`},
		{"rate without fault", "rules:\n  - rate: 0.3\n", "rules[0].fault: required with rate"},
		{"fault without rate", "rules:\n  - fault: 429\n", "rules[0].rate: required with fault"},
		{"rate too big", "rules:\n  - fault: 429\n    rate: 1.5\n", "rules[0].fault.rate: 1.5 is not in (0, 1]"},
		{"rates sum", "rules:\n  - faults: [{fault: 429, rate: 0.6}, {fault: 500, rate: 0.6}]\n", "rules[0].faults: rates add up to 1.2"},
		{"bad fault in list", "rules:\n  - faults: [{fault: [1], rate: 0.5}]\n", "rules[0].faults[0].fault: want a step"},
		{"bad endpoint", "rules:\n  - match: {endpoint: chat}\n    sequence: [529]\n", `rules[0].match.endpoint: "chat" is not generate, embeddings, models or any`},
		{"bad glob", "rules:\n  - match: {model: \"[\"}\n    sequence: [529]\n", `rules[0].match.model: bad glob`},
		{"bad latency", "rules:\n  - latency: {fixed: soon}\n", `rules[0].latency.fixed: "soon" is not a duration`},
		{"p99 below median", "rules:\n  - latency: {median: 1s, p99: 10ms}\n", "rules[0].latency.p99: 10ms is less than median 1s"},
		{"empty rule", "rules:\n  - match: {provider: openai}\n", "rules[0]: needs a sequence"},
		{"bad per", "rules:\n  - sequence: [529]\n    per: request\n", `rules[0].per: "request" is not provider, model or rule`},
		{"bad after", "rules:\n  - sequence: [529]\n    after: soon\n", `rules[0].after: "soon" is not a duration`},
		{"every without for", "rules:\n  - sequence: [529]\n    every: 10s\n", `rules[0].every: 10s must be at least after+for`},
		{"every too short", "rules:\n  - sequence: [529]\n    after: 5s\n    for: 6s\n    every: 10s\n", `rules[0].every: 10s must be at least after+for (11s)`},
		{"not yaml", "rules: [\n", "scenario: "},
		{"wrong type", "seed: many\n", "scenario: "},
		// goccy/go-yaml dereferences nil on a non-specific tag where a list
		// is expected (found by the chaos run: a stack trace, not a line).
		{"bare tag", "rules: !\n", "scenario: malformed YAML"},
		{"bare tag in a rule", "rules:\n  - sequence: !\n", "rules[0]: needs a sequence"},
		{"tag on a list", "rules: ! [1]\n", "scenario: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScenario([]byte(tt.in))
			if err == nil {
				t.Fatal("want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("err is not one line: %q", err)
			}
		})
	}
}

func TestLoadScenario(t *testing.T) {
	if sc, err := LoadScenario("overload-burst"); err != nil || sc.Name != "overload-burst" {
		t.Errorf("built-in: %v %v", sc, err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "s.yaml")
	os.WriteFile(p, []byte("rules:\n  - sequence: [529]\n"), 0o644)
	if sc, err := LoadScenario(p); err != nil || sc.Name != p || len(sc.Rules) != 1 {
		t.Errorf("file: %+v %v", sc, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("rules:\n  - sequence: [5299]\n"), 0o644)
	if _, err := LoadScenario(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": rules[0].sequence[0]") {
		t.Errorf("bad file: %v", err)
	}
	if _, err := LoadScenario("no-such-scenario"); err == nil || !strings.Contains(err.Error(), "healthy") {
		t.Errorf("missing: %v", err)
	}
}

func TestSequences(t *testing.T) {
	sc, _ := ParseScenario([]byte(`
rules:
  - match: {provider: anthropic}
    sequence: [529, 200]
    repeat: true
  - match: {provider: openai, model: "gpt-4*"}
    sequence: [500, 200]
    per: model
  - match: {provider: gemini}
    sequence: [503]
    per: rule
`))
	_, ts := newTS(t, &Config{Scenario: sc})
	check := func(name string, c call, want ...int) {
		t.Helper()
		if diff := cmp.Diff(want, statuses(t, ts.URL, c, len(want))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	check("repeat", call{api: dialectAnthropic, model: "c", text: "hi"}, 529, 200, 529, 200)
	check("per model a", call{api: dialectOpenAI, model: "gpt-4.1", text: "hi"}, 500, 200, 200)
	check("per model b", call{api: dialectOpenAI, model: "gpt-4o", text: "hi"}, 500, 200)
	check("no match", call{api: dialectOpenAI, model: "o3", text: "hi"}, 200)
	check("compatible prefix matches openai dialect", call{api: dialectGemini, model: "g", text: "hi"}, 503, 503)
	// The per-request header wins over the scenario and keeps its own count.
	check("header", call{api: dialectAnthropic, model: "c", text: "hi", header: "429,429,200"}, 429, 429, 200, 200)
	// Model marker.
	check("model marker", call{api: dialectOpenAI, model: "gpt-x+fault=529,200", text: "hi"}, 529, 200, 200)
	check("gemini model marker", call{api: dialectGemini, model: "gemini-2.5-flash+fault=429:1,200", text: "hi"}, 429, 200)
	resp, body := do(t, ts.URL, call{api: dialectOpenAI, model: "gpt-y+fault=200", text: "hi"})
	if resp.StatusCode != 200 || jsonPath(t, body, "model") != "gpt-y" {
		t.Errorf("model marker echo: %s", body)
	}
}

func TestCompatiblePrefix(t *testing.T) {
	sc, _ := ParseScenario([]byte("rules:\n  - match: {provider: deepseek}\n    sequence: [503]\n"))
	srv, ts := newTS(t, &Config{Scenario: sc})
	for _, p := range []string{"/deepseek/chat/completions", "/deepseek/v1/chat/completions", "/v1/chat/completions"} {
		req, _ := http.NewRequest("POST", ts.URL+p, strings.NewReader(`{"model":"deepseek-chat","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer sk-1234567")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := 503
		if p == "/v1/chat/completions" {
			want = 200
		}
		if resp.StatusCode != want {
			t.Errorf("%s: status %d, want %d", p, resp.StatusCode, want)
		}
	}
	if got := srv.Requests()[0].Provider; got != "deepseek" {
		t.Errorf("provider %q", got)
	}
}

func TestSeedDeterminism(t *testing.T) {
	run := func(seed uint64) []int {
		sc, _ := Builtin("rate-limited")
		_, ts := newTS(t, &Config{Scenario: sc, Seed: seed})
		return statuses(t, ts.URL, call{api: dialectOpenAI, model: "gpt-4.1", text: "hi"}, 60)
	}
	a, b, c := run(42), run(42), run(43)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different answers (-a +b):\n%s", diff)
	}
	if cmp.Equal(a, c) {
		t.Error("different seeds gave identical answers")
	}
	n := 0
	for _, s := range a {
		if s == 429 {
			n++
		}
	}
	if n < 6 || n > 30 {
		t.Errorf("%d of 60 rate limited, want about 18", n)
	}
}
