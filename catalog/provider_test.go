package catalog

import (
	"net/url"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/classify"
)

func TestKnownProviders(t *testing.T) {
	want := map[string]struct{ dialect, base, model string }{
		"anthropic":  {DialectAnthropic, "https://api.anthropic.com", "claude-sonnet-4-5"},
		"openai":     {DialectOpenAI, "https://api.openai.com/v1", "gpt-4.1"},
		"gemini":     {DialectGemini, "https://generativelanguage.googleapis.com", "gemini-2.5-flash"},
		"deepseek":   {DialectOpenAI, "https://api.deepseek.com/v1", "deepseek-chat"},
		"mistral":    {DialectOpenAI, "https://api.mistral.ai/v1", "mistral-large-latest"},
		"groq":       {DialectOpenAI, "https://api.groq.com/openai/v1", "llama-3.3-70b-versatile"},
		"openrouter": {DialectOpenAI, "https://openrouter.ai/api/v1", ""},
		"xai":        {DialectOpenAI, "https://api.x.ai/v1", ""},
		"together":   {DialectOpenAI, "https://api.together.xyz/v1", ""},
		"fireworks":  {DialectOpenAI, "https://api.fireworks.ai/inference/v1", ""},
		"azure":      {DialectAzure, "", ""},
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			p, ok := KnownProvider(strings.ToUpper(name))
			if !ok {
				t.Fatalf("KnownProvider(%q) not found", name)
			}
			if p.Dialect != w.dialect || p.BaseURL != w.base {
				t.Errorf("got dialect %q base %q, want %q %q", p.Dialect, p.BaseURL, w.dialect, w.base)
			}
			if w.model != "" && p.Model != w.model {
				t.Errorf("model %q, want %q", p.Model, w.model)
			}
			if len(p.KeyEnv) == 0 || !strings.HasSuffix(p.KeyEnv[0], "_API_KEY") {
				t.Errorf("KeyEnv = %v", p.KeyEnv)
			}
			if p.BaseURL != "" {
				if u, err := url.Parse(p.BaseURL); err != nil || u.Scheme != "https" || strings.HasSuffix(p.BaseURL, "/") {
					t.Errorf("bad base URL %q", p.BaseURL)
				}
			}
		})
	}
	if _, ok := KnownProvider("foo"); ok {
		t.Error("KnownProvider(foo) found")
	}
	all := KnownProviders()
	if len(all) != len(KnownProviderNames()) || len(all) < len(want)+2 {
		t.Errorf("KnownProviders() has %d entries", len(all))
	}
	all[0].KeyEnv[0] = "MUTATED"
	if p, _ := KnownProvider(all[0].Name); p.KeyEnv[0] == "MUTATED" {
		t.Error("KnownProviders returned the table's own slice")
	}
}

func TestEnvKey(t *testing.T) {
	g, _ := KnownProvider("gemini")
	tests := []struct {
		name    string
		env     map[string]string
		key, vr string
	}{
		{"none", nil, "", ""},
		{"google only", map[string]string{"GOOGLE_API_KEY": "AIzaG"}, "AIzaG", "GOOGLE_API_KEY"},
		{"gemini first", map[string]string{"GOOGLE_API_KEY": "AIzaG", "GEMINI_API_KEY": " AIzaX\n"}, "AIzaX", "GEMINI_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, v := g.EnvKey(func(s string) string { return tt.env[s] })
			if k != tt.key || v != tt.vr {
				t.Errorf("EnvKey = %q, %q; want %q, %q", k, v, tt.key, tt.vr)
			}
		})
	}
}

// TestClassifierKnowsEveryProvider keeps the classifier's provider names
// (what decode --provider accepts) a superset of the provider table, so a
// provider added here cannot be refused there.
func TestClassifierKnowsEveryProvider(t *testing.T) {
	for _, p := range KnownProviders() {
		if p.Dialect != DialectSim && !classify.KnownProvider(p.Name) {
			t.Errorf("classify does not know provider %q", p.Name)
		}
	}
}
