package config

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// goTypes matches what must never reach a user: Go type and decoder words.
var goTypes = regexp.MustCompile(`interface \{\}|u?int(8|16|32|64)\b|float(32|64)|time\.Duration|Go (struct|value)|unmarshal|\bconfig\.[A-Z]|\[\]|map\[|expected \)`)

// Issue 10 item 10: config check reports every problem, YAML decode errors
// and Validate errors alike, each with file:line:col and the field path, in
// the user's terms.
func TestEveryProblemReported(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "bad-many.yaml"), nil)
	if err == nil {
		t.Fatal("Load succeeded")
	}
	want := []string{
		`testdata/bad-many.yaml:2:24: providers.anthropic.api_key: expected a string, got a list`,
		`testdata/bad-many.yaml:3:30: providers.openai.base_url: not an http(s) URL with a host`,
		`testdata/bad-many.yaml:7:27: routes.default.retry.max_attempts: expected a whole number, got "four"`,
		`testdata/bad-many.yaml:7:33: routes.default.retry.budget: must be in [0,1]`,
		`testdata/bad-many.yaml:7:54: routes.default.retry.max_wait: duration 60 needs a unit (500ms, 60s, 5m)`,
		`testdata/bad-many.yaml:8:25: routes.default.breaker.failures: expected a whole number, got 5.5`,
		`testdata/bad-many.yaml:8:30: routes.default.breaker.cooldwn: unknown key "cooldwn" (did you mean "cooldown"?)`,
		`testdata/bad-many.yaml:9:5: routes.default.order: must be priority or cost, not "fastest"`,
		`testdata/bad-many.yaml:10:33: routes.default.fallback_on_content_filter: expected true or false, got 1`,
		`testdata/bad-many.yaml:12:14: routes.fast.targets: expected a list, got "openai/gpt-4.1-mini"`,
		`testdata/bad-many.yaml:13:22: routes.fast.max_concurrency: expected a whole number, got 99999999999999999999 (out of range)`,
		`testdata/bad-many.yaml:14:21: mcp.tool_timeout: duration 5 needs a unit (500ms, 60s, 5m)`,
		`testdata/bad-many.yaml:15:23: alerts.webhook_url: expected a string, got a mapping`,
	}
	if d := cmp.Diff(want, strings.Split(err.Error(), "\n")); d != "" {
		t.Errorf("error lines (-want +got):\n%s", d)
	}
}

func TestTypeMessagesInUserTerms(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{`providers: {anthropic: {api_key: [1]}}`, `providers.anthropic.api_key: expected a string, got a list`},
		{`alerts: {webhook_url: [x]}`, `alerts.webhook_url: expected a string, got a list`},
		{`default_provider: {a: 1}`, `default_provider: expected a string, got a mapping`},
		{`routes: {default: {targets: [sim], timeout: [1]}}`, `routes.default.timeout: expected a duration (500ms, 60s, 5m), got a list`},
		{`routes: {default: {targets: [sim], timeout: true}}`, `routes.default.timeout: expected a duration (500ms, 60s, 5m), got true`},
		{`routes: {default: {targets: [sim], retry: {max_attempts: 4.5}}}`, `routes.default.retry.max_attempts: expected a whole number, got 4.5`},
		{`routes: {default: {targets: [sim], retry: {max_attempts: .inf}}}`, `routes.default.retry.max_attempts: expected a whole number, got .inf`},
		{`routes: {default: {targets: [sim], retry: {budget: .nan}}}`, `routes.default.retry.budget: expected a number, got .nan`},
		{`routes: {default: {targets: [sim], retry: {budget: lots}}}`, `routes.default.retry.budget: expected a number, got "lots"`},
		{`routes: {default: {targets: [sim], fallback_on_content_filter: "yes"}}`, `routes.default.fallback_on_content_filter: expected true or false, got "yes"`},
		{`routes: {default: {targets: [sim], max_cost_usd: cheap}}`, `routes.default.max_cost_usd: expected a number, got "cheap"`},
		{`routes: {default: {targets: [sim], static_fallback: {a: [1]}}}`, `routes.default.static_fallback.a: expected a string, got a list`},
		{`routes: {default: {targets: [[a]]}}`, `routes.default.targets[0]: expected provider/model or a mapping with key target, got a list`},
		{`routes: {default: [sim]}`, `routes.default: expected a mapping (key: value), got a list`},
		{`providers: {anthropic: 5}`, `providers.anthropic: expected a mapping (key: value), got 5`},
		{`models: {x: {context_window: big}}`, `models.x.context_window: expected a whole number, got "big"`},
		{`pricing: {foo: {in: abc}}`, `pricing.foo.in: expected a number, got "abc"`},
		{`mcp: {tool_timeout: 5}`, `mcp.tool_timeout: duration 5 needs a unit (500ms, 60s, 5m)`},
		{`routes: {default: {targets: [sim], retry: {max_attempts: "${N}x"}}}`, `routes.default.retry.max_attempts: expected a whole number, got "${N}x"`},
	}
	env := envFunc(map[string]string{"N": "3"})
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tt.yaml), env)
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			got := err.Error()
			if i := strings.Index(got, ": "); i >= 0 && strings.HasPrefix(got, "t.yaml:") {
				got = got[i+2:]
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if goTypes.MatchString(err.Error()) {
				t.Errorf("Go type in %q", err)
			}
		})
	}
}

// Values that decode fine stay accepted: quoted numbers, whole floats,
// numbers in string fields, explicit nulls, env-expanded numbers.
func TestLenientScalarsStillDecode(t *testing.T) {
	for _, y := range []string{
		`routes: {default: {targets: [sim], retry: {max_attempts: "4", budget: "0.5"}}}`,
		`routes: {default: {targets: [sim], max_concurrency: 1e3}}`,
		`routes: {default: {targets: [sim], retry: {max_attempts: 0x10}}}`,
		`routes: {default: {targets: [sim], retry: {max_attempts: ~}, timeout: 0}}`,
		`routes: {default: {targets: [sim], retry: {max_attempts: ${N}}, static_fallback: {"*": 42}}}`,
	} {
		if _, err := Parse("t.yaml", []byte(y), envFunc(map[string]string{"N": "3"})); err != nil {
			t.Errorf("%s: %v", y, err)
		}
	}
	merge := "routes:\n  default: &d\n    targets: [sim]\n    timeout: 30s\n  other:\n    <<: *d\n    order: cost\n"
	c, err := Parse("t.yaml", []byte(merge), nil)
	if err != nil {
		t.Fatalf("merge key: %v", err)
	}
	if r := c.Routes["other"]; r == nil || r.Order != "cost" {
		t.Errorf("merged route %+v", r)
	}
}
