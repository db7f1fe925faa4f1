package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/catalog"
)

func envFunc(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

var fullEnv = map[string]string{
	"ANTHROPIC_API_KEY": "sk-ant-api03-abcdefghijklmnop1234",
	"OPENAI_API_KEY":    "sk-proj-zzzzzzzzzzzzzzzzzzzz9876",
	"DEEPSEEK_API_KEY":  "sk-dddddddddddddddd5555",
	"GEMINI_API_KEY":    "AIzaSyXXXXXXXXXXXXXXXXXXXX0000",
}

func targets(r *Route) []string {
	var out []string
	for _, t := range r.Targets {
		out = append(out, t.Target)
	}
	return out
}

func TestLoadGood(t *testing.T) {
	tests := []struct {
		file  string
		env   map[string]string
		check func(t *testing.T, c *Config)
	}{
		{"full.yaml", fullEnv, func(t *testing.T, c *Config) {
			if d := cmp.Diff([]string{"deepseek/deepseek-chat", "gemini/gemini-2.5-flash", "openai/gpt-4.1", "anthropic/claude-sonnet-4-5"}, targets(c.Routes["default"])); d != "" {
				t.Errorf("priority route reordered (-want +got):\n%s", d)
			}
			// order: cost sorts cheapest first (deepseek 0.28/0.42 < gemini 0.3/2.5 < sonnet 3/15).
			if d := cmp.Diff([]string{"deepseek/deepseek-chat", "gemini/gemini-2.5-flash", "anthropic/claude-sonnet-4-5"}, targets(c.Routes["cheap"])); d != "" {
				t.Errorf("cost route (-want +got):\n%s", d)
			}
			a := c.Providers["anthropic"]
			if a.Type != "anthropic" || a.APIKey != fullEnv["ANTHROPIC_API_KEY"] || a.Model != "claude-sonnet-4-5" || a.BaseURL != "https://api.anthropic.com" {
				t.Errorf("anthropic = %+v", *a)
			}
			if p := c.Providers["deepseek"]; p == nil || p.APIKey != fullEnv["DEEPSEEK_API_KEY"] || p.BaseURL != "https://api.deepseek.com/v1" {
				t.Errorf("implicit deepseek = %+v", p)
			}
			if l := c.Providers["local"]; l.Type != "openai-compatible" || l.APIKey != "none" {
				t.Errorf("local = %+v", *l)
			}
			r := c.Routes["default"]
			want := DefaultRoute()
			want.Targets, want.MaxConcurrency, want.Cache.TTL, want.StaticFallback = r.Targets, 20, 5*time.Minute, map[string]string{"help": "Available commands: /status, /reset, /help"}
			want.decoded = true
			if d := cmp.Diff(&want, r, cmp.AllowUnexported(Route{}, Target{})); d != "" {
				t.Errorf("default route (-want +got):\n%s", d)
			}
			p := c.Routes["cheap"].TargetPolicy(1)
			if p.Target != "gemini/gemini-2.5-flash" || *p.Breaker.Failures != 8 || p.Breaker.Cooldown != 45*time.Second || p.Breaker.Window != DefaultRoute().Breaker.Window || p.MaxConcurrency != 40 || p.Retry.MaxAttempts != 4 {
				t.Errorf("merged policy = %+v", p)
			}
			if p := c.Routes["cheap"].TargetPolicy(0); *p.Breaker.Failures != 5 || p.MaxConcurrency != 0 {
				t.Errorf("unmerged policy = %+v", p)
			}
			if got, _ := c.Catalog().Price("local", "llama-3.3-70b"); got != (catalog.Price{}) {
				t.Errorf("pricing override = %+v", got)
			}
			if c.Source != "testdata/full.yaml" || c.DefaultProvider != "local" {
				t.Errorf("Source %q DefaultProvider %q", c.Source, c.DefaultProvider)
			}
		}},
		{"minimal.yaml", map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_MODEL": "claude-haiku-4-5", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}, func(t *testing.T, c *Config) {
			if d := cmp.Diff([]string{"anthropic/claude-haiku-4-5"}, targets(c.Routes["default"])); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if got := c.Providers["anthropic"].BaseURL; got != "http://127.0.0.1:9" {
				t.Errorf("BaseURL = %q", got)
			}
			want := DefaultRoute()
			got := *c.Routes["default"]
			got.Targets = nil
			want.decoded = true
			if d := cmp.Diff(want, got, cmp.AllowUnexported(Route{})); d != "" {
				t.Errorf("defaults (-want +got):\n%s", d)
			}
		}},
		{"empty.yaml", map[string]string{"GROQ_API_KEY": "gsk_x", "OPENAI_API_KEY": "sk-x"}, func(t *testing.T, c *Config) {
			if d := cmp.Diff([]string{"openai/gpt-4.1", "groq/llama-3.3-70b-versatile"}[1:], targets(c.Routes["default"])[:1]); d != "" {
				t.Errorf("cheapest first (-want +got):\n%s", d)
			}
			if n := len(c.Routes["default"].Targets); n != 2 {
				t.Errorf("%d targets", n)
			}
		}},
		{"empty.yaml", nil, func(t *testing.T, c *Config) {
			if d := cmp.Diff([]string{"sim/sim-1"}, targets(c.Routes["default"])); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		}},
		{"providers-only.yaml", map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o", "GOOGLE_API_KEY": "g"}, func(t *testing.T, c *Config) {
			// Blended $/MTok: gpt-4.1-mini 0.70 < gemini-2.5-flash 0.85 < sonnet 6.
			if d := cmp.Diff([]string{"openai/gpt-4.1-mini", "gemini/gemini-2.5-flash", "anthropic/claude-sonnet-4-5"}, targets(c.Routes["default"])); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if c.Routes["default"].Order != "cost" || c.Providers["gemini"].APIKey != "g" {
				t.Errorf("order %q gemini %+v", c.Routes["default"].Order, c.Providers["gemini"])
			}
		}},
		{"explicit-zeros.yaml", nil, func(t *testing.T, c *Config) {
			r := c.Routes["default"]
			if *r.Retry.Budget != 0 || *r.Retry.MinRetryConcurrency != 0 || r.Retry.BaseDelay != 0 || *r.Breaker.Failures != 0 || r.HedgeAfter != 0 || r.QueueTimeout != 0 {
				t.Errorf("explicit zeros replaced: %+v", *r)
			}
			if d := DefaultRoute(); r.Retry.MaxAttempts != d.Retry.MaxAttempts || *r.Breaker.FailureRatio != 0.5 || r.Breaker.MinCalls != d.Breaker.MinCalls {
				t.Errorf("absent keys not defaulted: %+v", *r)
			}
		}},
		{"env-expand.yaml", map[string]string{"MAXC": "7", "LOCAL_MODEL": "llama-3.3-70b", "TIMEOUT": "", "HOME": "/root"}, func(t *testing.T, c *Config) {
			l := c.Providers["local"]
			if l.BaseURL != "http://127.0.0.1:8000/v1" || l.APIKey != "none" || l.Model != "llama-3.3-70b" {
				t.Errorf("local = %+v", *l)
			}
			r := c.Routes["default"]
			if r.Timeout != 30*time.Second || r.MaxConcurrency != 7 {
				t.Errorf("timeout %v max_concurrency %d", r.Timeout, r.MaxConcurrency)
			}
			if got := r.StaticFallback["*"]; got != "price is $5 ${NOT A VAR} $HOME" {
				t.Errorf("static_fallback = %q", got)
			}
		}},
		{"azure.yaml", map[string]string{"AZURE_OPENAI_API_KEY": "az", "AZURE_OPENAI_ENDPOINT": "https://me.openai.azure.com/", "AZURE_OPENAI_DEPLOYMENT": "gpt-4.1", "WORK_AZURE_KEY": "wk"}, func(t *testing.T, c *Config) {
			a, w := c.Providers["azure"], c.Providers["work"]
			if a.BaseURL != "https://me.openai.azure.com" || a.Model != "gpt-4.1" || a.APIVersion != "2024-10-21" || a.APIKey != "az" {
				t.Errorf("azure = %+v", *a)
			}
			if w.APIVersion != "2025-01-01-preview" || w.APIKey != "wk" || w.Type != "azure" {
				t.Errorf("work = %+v", *w)
			}
			if d := cmp.Diff([]string{"azure/gpt-4.1", "work/gpt-4o-prod"}, targets(c.Routes["default"])); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, err := Load(filepath.Join("testdata", tt.file), envFunc(tt.env))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestLoadBad(t *testing.T) {
	tests := []struct {
		file string
		env  map[string]string
		want []string // each a whole line of the error, in order
	}{
		{"bad-unknown-top.yaml", nil, []string{`testdata/bad-unknown-top.yaml:2:1: routez: unknown key "routez" (did you mean "routes"?)`}},
		{"bad-unknown-nested.yaml", fullEnv, []string{`testdata/bad-unknown-nested.yaml:5:57: routes.default.targets[1].breaker.cooldwn: unknown key "cooldwn" (did you mean "cooldown"?)`}},
		{"bad-duration.yaml", nil, []string{`testdata/bad-duration.yaml:5:19: routes.default.retry.base_delay: invalid duration "2q" (use a unit: 500ms, 60s, 5m)`}},
		{"bad-duration-int.yaml", nil, []string{`testdata/bad-duration-int.yaml:4:14: routes.default.timeout: duration 60 needs a unit (500ms, 60s, 5m)`}},
		{"bad-budget.yaml", nil, []string{`testdata/bad-budget.yaml:6:13: routes.x.retry.budget: must be in [0,1]`}},
		{"bad-max-cost.yaml", nil, []string{`testdata/bad-max-cost.yaml:4:5: routes.default.max_cost_usd: must be a dollar amount ≥ 0, not -0.5`}},
		{"bad-provider.yaml", nil, []string{`testdata/bad-provider.yaml:3:37: routes.default.targets[2]: unknown provider "foo" (known: anthropic, openai, azure, gemini, deepseek, mistral, groq, openrouter, xai, together, fireworks, sim)`}},
		{"bad-type.yaml", nil, []string{`testdata/bad-type.yaml:2:10: providers.mine.type: unknown provider type "antropic" (known: anthropic, openai, azure, gemini, deepseek, mistral, groq, openrouter, xai, together, fireworks, openai-compatible, sim)`}},
		{"bad-no-type.yaml", nil, []string{`testdata/bad-no-type.yaml:2:3: providers.mine: unknown provider "mine": set type to one of anthropic, openai, azure, gemini, deepseek, mistral, groq, openrouter, xai, together, fireworks, openai-compatible, sim`}},
		{"bad-missing-key.yaml", nil, []string{
			`testdata/bad-missing-key.yaml:2:15: providers.anthropic.api_key: no API key (${MY_ANTHROPIC_KEY} is not set)`,
			`testdata/bad-missing-key.yaml:3:3: providers.openai.api_key: no API key (set OPENAI_API_KEY)`,
		}},
		{"minimal.yaml", nil, []string{`testdata/minimal.yaml:3:15: routes.default.targets[0]: provider "anthropic" has no API key (set ANTHROPIC_API_KEY, or add it under providers)`}},
		{"bad-order.yaml", nil, []string{`testdata/bad-order.yaml:4:5: routes.default.order: must be priority or cost, not "fastest"`}},
		{"bad-syntax.yaml", nil, []string{`testdata/bad-syntax.yaml:2:12: sequence end token ']' not found`}},
		{"bad-duplicate.yaml", nil, []string{`testdata/bad-duplicate.yaml:3:26: routes.default.targets[1]: duplicate target "sim/sim-1" (also routes.default.targets[0])`}},
		{"bad-attempts.yaml", nil, []string{`testdata/bad-attempts.yaml:4:13: routes.default.retry.max_attempts: must be at least 1 (the first attempt counts)`}},
		{"bad-type-mismatch.yaml", nil, []string{`testdata/bad-type-mismatch.yaml:4:22: routes.default.max_concurrency: expected a whole number, got "lots"`}},
		{"env-expand.yaml", nil, []string{`testdata/env-expand.yaml:11:22: routes.default.max_concurrency: expected a whole number, got "${MAXC}" (${MAXC} is not set)`}},
		{"bad-azure.yaml", nil, []string{
			`testdata/bad-azure.yaml:2:3: providers.azure.base_url: required (set AZURE_OPENAI_ENDPOINT or base_url)`,
			`testdata/bad-azure.yaml:2:3: providers.azure.model: required: the Azure deployment name (set AZURE_OPENAI_DEPLOYMENT or model)`,
		}},
		{"bad-base-url.yaml", nil, []string{
			`testdata/bad-base-url.yaml:2:36: providers.local.base_url: not an http(s) URL with a host`,
			`testdata/bad-base-url.yaml:3:37: providers.other.base_url: must not have a query or fragment`,
			`testdata/bad-base-url.yaml:5:3: routes.a/b: a route name must be non-empty and without '/' (provider/model names a target)`,
		}},
		{"bad-empty-targets.yaml", nil, []string{`testdata/bad-empty-targets.yaml:3:5: routes.default.targets: no targets`}},
		{"bad-key-whitespace.yaml", nil, []string{`testdata/bad-key-whitespace.yaml:2:15: providers.anthropic.api_key: the key contains whitespace or quotes; paste it again without them`}},
		{"bad-target-override.yaml", nil, []string{`testdata/bad-target-override.yaml:5:37: routes.default.targets[1].retry.budget: must be in [0,1]`}},
		{"bad-webhook.yaml", nil, []string{`testdata/bad-webhook.yaml:3:10: alerts.webhook_url: not an http(s) URL with a host`}},
		{"bad-tag.yaml", nil, []string{`testdata/bad-tag.yaml:4:7: routes.default.targets: YAML tag "!" is not supported in llmguard's config`}},
		{"bad-not-mapping.yaml", nil, []string{`testdata/bad-not-mapping.yaml:1:1: the configuration must be a mapping of keys (providers, routes, ...)`}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, err := Load(filepath.Join("testdata", tt.file), envFunc(tt.env))
			if err == nil {
				t.Fatalf("Load succeeded: %+v", c)
			}
			if d := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); d != "" {
				t.Errorf("error lines (-want +got):\n%s", d)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FieldError", err)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error leaks a key: %v", err)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), nil)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want ErrNotExist", err)
	}
}

func TestEnvExpansion(t *testing.T) {
	env := envFunc(map[string]string{"A": "x", "EMPTY": "", "N": "12"})
	tests := []struct {
		in, want string
		unset    []string
	}{
		{"plain", "plain", nil},
		{"${A}", "x", nil},
		{"pre-${A}-post-${A}", "pre-x-post-x", nil},
		{"${MISSING}", "", []string{"MISSING"}},
		{"${EMPTY:-d}", "d", nil},
		{"${MISSING:-a:b-c}", "a:b-c", nil},
		{"${MISSING:-}", "", nil},
		{"$A ${ not} ${1X} ${A", "$A ${ not} ${1X} ${A", nil},
		{"$${A}", "$x", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var unset []string
			got := expandEnv(string(markEnv([]byte(tt.in))), env, &unset)
			if got != tt.want || !cmp.Equal(unset, tt.unset) {
				t.Errorf("expand(%q) = %q, unset %v; want %q, %v", tt.in, got, unset, tt.want, tt.unset)
			}
		})
	}
}

func TestParseInline(t *testing.T) {
	tests := []struct {
		name, src string
		env       map[string]string
		check     func(*Config) string
	}{
		{"flow mapping with bare ${VAR}", "providers:\n  anthropic: {api_key: ${K}, base_url: https://x.example}\n", map[string]string{"K": "sk-ant-1"},
			func(c *Config) string {
				return c.Providers["anthropic"].APIKey + " " + c.Providers["anthropic"].BaseURL
			}},
		{"flow sequence of ${VAR}", "routes:\n  default: {targets: [${T1}, ${T2:-sim/sim-1}]}\n", map[string]string{"T1": "sim"},
			func(c *Config) string { return strings.Join(targets(c.Routes["default"]), " ") }},
		{"numeric ${VAR}", "routes:\n  default: {targets: [sim], retry: {budget: ${B}, max_attempts: ${M}}}\n", map[string]string{"B": "0.5", "M": "2"},
			func(c *Config) string {
				r := c.Routes["default"].Retry
				return strings.TrimSpace(strings.Repeat("x", r.MaxAttempts)) + " " + map[bool]string{true: "half"}[r.Budget != nil && *r.Budget == 0.5]
			}},
		{"key with YAML syntax stays a string", "providers:\n  openai: {api_key: ${K}}\n", map[string]string{"K": "a: b, [c] #d"},
			func(c *Config) string { return c.Providers["openai"].APIKey }},
		{"reference inside a plain URL", "providers:\n  local: {type: openai-compatible, base_url: http://${HOST}:8000/v1, api_key: none, model: m}\n", map[string]string{"HOST": "127.0.0.1"},
			func(c *Config) string { return c.Providers["local"].BaseURL }},
		{"null provider", "providers:\n  sim:\n", nil,
			func(c *Config) string {
				return c.Providers["sim"].Type + " " + strings.Join(targets(c.Routes["default"]), "")
			}},
	}
	want := []string{"sk-ant-1 https://x.example", "sim/sim-1 sim/sim-1", "xx half", "a: b, [c] #d", "http://127.0.0.1:8000/v1", "sim sim/sim-1"}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("inline.yaml", []byte(tt.src), envFunc(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.check(c); got != want[i] {
				t.Errorf("got %q, want %q", got, want[i])
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"no keys: sim", nil, []string{"sim/sim-1"}},
		{"anthropic+deepseek cheapest first", map[string]string{"ANTHROPIC_API_KEY": "a", "DEEPSEEK_API_KEY": "d"}, []string{"deepseek/deepseek-chat", "anthropic/claude-sonnet-4-5"}},
		{"model override", map[string]string{"OPENAI_API_KEY": "o", "OPENAI_MODEL": "gpt-4.1-nano", "ANTHROPIC_API_KEY": "a"}, []string{"openai/gpt-4.1-nano", "anthropic/claude-sonnet-4-5"}},
		{"google key for gemini", map[string]string{"GOOGLE_API_KEY": "g", "XAI_API_KEY": "x"}, []string{"xai/grok-3-mini", "gemini/gemini-2.5-flash"}},
		{"azure needs endpoint and deployment", map[string]string{"AZURE_OPENAI_API_KEY": "z"}, []string{"sim/sim-1"}},
		{"azure complete", map[string]string{"AZURE_OPENAI_API_KEY": "z", "AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com", "AZURE_OPENAI_DEPLOYMENT": "gpt-4o"}, []string{"azure/gpt-4o"}},
		{"whitespace-only key ignored", map[string]string{"MISTRAL_API_KEY": "  \n"}, []string{"sim/sim-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := FromEnv(envFunc(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, targets(c.Routes["default"])); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			for name, p := range c.Providers {
				if info, ok := p.Info(); !ok || info.Name != name {
					t.Errorf("provider %s: Info() = %v, %v", name, info.Name, ok)
				}
				if info, _ := p.Info(); len(info.KeyEnv) > 0 && tt.env[p.KeyVar()] == "" {
					t.Errorf("provider %s: KeyVar() = %q", name, p.KeyVar())
				}
			}
			if c.Source != SourceEnvironment || len(c.Providers) != len(tt.want) {
				t.Errorf("Source %q, %d providers", c.Source, len(c.Providers))
			}
		})
	}
}

func TestLoadDefault(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	c, err := LoadDefault(envFunc(nil))
	if err != nil || c.Source != SourceEnvironment {
		t.Fatalf("no file: %v, %+v", err, c)
	}
	if err := os.WriteFile(DefaultFile, []byte("routes:\n  default: {targets: [sim], timeout: 9s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = LoadDefault(envFunc(nil))
	if err != nil || c.Source != DefaultFile || c.Routes["default"].Timeout != 9*time.Second {
		t.Fatalf("llmguard.yaml: %v, %+v", err, c)
	}
	other := filepath.Join(dir, "other.yaml")
	if err := os.WriteFile(other, []byte("routes:\n  default: {targets: [sim], timeout: 7s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = LoadDefault(envFunc(map[string]string{"LLMGUARD_CONFIG": other}))
	if err != nil || c.Source != other || c.Routes["default"].Timeout != 7*time.Second {
		t.Fatalf("LLMGUARD_CONFIG: %v, %+v", err, c)
	}
}

func TestProvisionGoConfig(t *testing.T) {
	c := &Config{
		Routes: map[string]*Route{
			"default": {Targets: []Target{{Target: "sim"}}},
			"x":       {Targets: []Target{{Target: "openai/gpt-4.1"}, {Target: "openai/gpt-4.1-nano"}}, Order: "COST", Retry: Retry{MaxAttempts: 2}},
		},
	}
	c.Provision(envFunc(map[string]string{"OPENAI_API_KEY": "o"}))
	c.Provision(envFunc(map[string]string{"OPENAI_API_KEY": "o"})) // idempotent
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	x := c.Routes["x"]
	if d := cmp.Diff([]string{"openai/gpt-4.1-nano", "openai/gpt-4.1"}, targets(x)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	d := DefaultRoute()
	if x.Retry.MaxAttempts != 2 || *x.Retry.Budget != *d.Retry.Budget || x.Timeout != d.Timeout || x.Breaker.Probes != d.Breaker.Probes ||
		*x.Breaker.FailureRatio != *d.Breaker.FailureRatio || x.Breaker.InitialCooldown != d.Breaker.InitialCooldown {
		t.Errorf("zero fields not defaulted: %+v", *x)
	}
	if got := c.Routes["default"].Targets[0].Target; got != "sim/sim-1" {
		t.Errorf("bare target = %q", got)
	}
}

// TestDecodePanicRecovered: goccy/go-yaml v1.19.2 panics decoding a
// non-specific tag where a list belongs (found by FuzzLoad). The walker
// rejects such tags first; decodeNode must still turn a panic into an error.
func TestDecodePanicRecovered(t *testing.T) {
	f, err := parseBytes([]byte("routes:\n  default:\n    targets:\n      ! 000\n"))
	if err != nil {
		t.Fatal(err)
	}
	var c Config
	err = decodeNode(f.Docs[0].Body, &c)
	var fe *FieldError
	if !errors.As(err, &fe) || !strings.Contains(fe.Msg, "malformed YAML") {
		t.Errorf("decodeNode = %v, want a malformed-YAML *FieldError", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"routes:\n  default:\n    targets: sim\n", `t.yaml:3:14: routes.default.targets: expected a list, got "sim"`},
		{"routes:\n  default:\n    targets: [sim]\n    retry: 3\n", "t.yaml:4:12: routes.default.retry: expected a mapping (key: value), got 3"},
		{"routes: [a]\n", "t.yaml:1:9: routes: expected a mapping (key: value), got a list"},
		{"providers:\n  anthropic: sk-ant-xxx\n", "t.yaml:2:14: providers.anthropic: expected a mapping (key: value), got a string"},
		{"routes:\n  default:\n    targets: [{targt: sim}]\n", `t.yaml:3:16: routes.default.targets[0].targt: unknown key "targt" (did you mean "target"?)`},
		{"a: 1\n", `t.yaml:1:1: a: unknown key "a" (known: providers, default_provider, routes, pricing, models, alerts, mcp, mcp_upstreams, state)`},
		{"routes:\n  x:\n", "t.yaml:2:3: routes.x.targets: no targets"},
		{"routes:\n  default:\n    targets: [sim]\n    timeout: 5s\n    timeout: 6s\n", `t.yaml:5:5: mapping key "timeout" already defined at [4:5]`},
		{"a: 1\n---\nb: 2\n", "t.yaml: more than one YAML document"},
		{"routes:\n  default: &r {targets: [sim], timeout: 5s}\n  other: *r\n", ""},
		{"", ""},
		{"# only a comment\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			c, err := Parse("t.yaml", []byte(tt.src), nil)
			if err == nil {
				err = c.Validate()
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("error %q, want %q", got, tt.want)
			}
		})
	}
}
