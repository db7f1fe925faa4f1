package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCatalogCoversDefaults(t *testing.T) {
	cat := Catalog()
	if len(cat) < 40 {
		t.Fatalf("catalog has %d entries", len(cat))
	}
	for _, p := range KnownProviders() {
		if p.Model == "" {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			var c *Config
			if _, ok := c.Price(p.Name, p.Model); !ok {
				t.Fatalf("default model %s/%s has no price in catalog.yaml", p.Name, p.Model)
			}
			if w := c.Model(p.Name, p.Model).ContextWindow; w <= 0 {
				t.Errorf("context window %d", w)
			}
		})
	}
	for k, e := range cat {
		prov, _, ok := splitTarget(k)
		if _, known := KnownProvider(prov); !ok || !known {
			t.Errorf("catalog key %q: unknown provider", k)
		}
		if e.In < 0 || e.Out < 0 || e.ContextWindow <= 0 {
			t.Errorf("catalog %q: bad entry %+v", k, e)
		}
		if e.Prefill != (prov == "anthropic" || prov == "sim") {
			t.Errorf("catalog %q: prefill %v", k, e.Prefill)
		}
	}
}

func TestPriceAndModel(t *testing.T) {
	cfg := &Config{
		Providers: map[string]*Provider{
			"local": {Type: "openai-compatible"},
			"work":  {Type: "anthropic"},
		},
		Pricing: map[string]Price{
			"openai/gpt-4.1":        {In: 1, Out: 2},
			"my-model":              {In: 0.5, Out: 0.5},
			"local/llama":           {In: 0, Out: 0},
			"work/claude-haiku-4-5": {In: 9, Out: 9},
		},
		Models: map[string]ModelInfo{
			"local/llama":                 {ContextWindow: 8192},
			"anthropic/claude-sonnet-4-5": {ContextWindow: 1000000, Prefill: true},
		},
	}
	tests := []struct {
		name, provider, model string
		cfg                   *Config
		price                 Price
		ok                    bool
		info                  ModelInfo
	}{
		{"catalog", "anthropic", "claude-sonnet-4-5", nil, Price{3, 15}, true, ModelInfo{ContextWindow: 200000, Prefill: true}},
		{"date suffix", "anthropic", "claude-sonnet-4-5-20250929", nil, Price{3, 15}, true, ModelInfo{ContextWindow: 200000, Prefill: true}},
		{"latest suffix", "mistral", "mistral-large-latest", nil, Price{2, 6}, true, ModelInfo{ContextWindow: 131072, Prefill: false}},
		{"openai no prefill", "openai", "gpt-4o-mini", nil, Price{0.15, 0.6}, true, ModelInfo{ContextWindow: 128000, Prefill: false}},
		{"slash model", "openrouter", "anthropic/claude-sonnet-4.5", nil, Price{3, 15}, true, ModelInfo{ContextWindow: 200000, Prefill: false}},
		{"unknown", "openai", "gpt-99", nil, Price{}, false, ModelInfo{}},
		{"unknown provider", "foo", "gpt-4.1", nil, Price{}, false, ModelInfo{}},
		{"override provider/model", "openai", "gpt-4.1", cfg, Price{1, 2}, true, ModelInfo{ContextWindow: 1047576, Prefill: false}},
		{"override bare model", "local", "my-model", cfg, Price{0.5, 0.5}, true, ModelInfo{}},
		{"override configured name", "local", "llama", cfg, Price{}, true, ModelInfo{ContextWindow: 8192, Prefill: false}},
		{"named provider uses its type", "work", "claude-opus-4-1", cfg, Price{15, 75}, true, ModelInfo{ContextWindow: 200000, Prefill: true}},
		{"named provider override", "work", "claude-haiku-4-5", cfg, Price{9, 9}, true, ModelInfo{ContextWindow: 200000, Prefill: true}},
		{"models override replaces", "anthropic", "claude-sonnet-4-5", cfg, Price{3, 15}, true, ModelInfo{ContextWindow: 1000000, Prefill: true}},
		{"embedding model", "gemini", "gemini-embedding-001", nil, Price{0.15, 0}, true, ModelInfo{ContextWindow: 2048, Dimensions: 3072, MinDimensions: 128}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := tt.cfg.Price(tt.provider, tt.model)
			if ok != tt.ok || p != tt.price {
				t.Errorf("Price = %+v, %v; want %+v, %v", p, ok, tt.price, tt.ok)
			}
			if d := cmp.Diff(tt.info, tt.cfg.Model(tt.provider, tt.model)); d != "" {
				t.Errorf("Model (-want +got):\n%s", d)
			}
		})
	}
}

func TestPriceMath(t *testing.T) {
	p := Price{In: 3, Out: 15}
	if got := p.Blended(); got != 6 {
		t.Errorf("Blended = %v", got)
	}
	if got := p.Cost(1000, 2000); got != 0.033 {
		t.Errorf("Cost = %v", got)
	}
}

func TestParseCatalogStrict(t *testing.T) {
	if _, err := parseCatalog([]byte("models:\n  a/b: {in: 1, bogus: 2}\n")); err == nil {
		t.Error("unknown catalog field accepted")
	}
}

func TestBaseModel(t *testing.T) {
	tests := map[string]string{
		"claude-sonnet-4-5-20250929": "claude-sonnet-4-5",
		"gpt-4.1-2025-04-14":         "gpt-4.1",
		"mistral-large-latest":       "mistral-large",
		"gemini-2.0-flash-001":       "gemini-2.0-flash",
		"gpt-4.1":                    "",
		"claude-sonnet-4-5":          "",
		"llama-3.3-70b-versatile":    "",
		"x-14":                       "",
		"-latest":                    "",
		"a-2025-04-1x":               "",
	}
	for in, want := range tests {
		if got := baseModel(in); got != want {
			t.Errorf("baseModel(%q) = %q, want %q", in, got, want)
		}
	}
}
