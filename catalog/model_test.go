package catalog

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCatalogCoversDefaults(t *testing.T) {
	cat := Builtin()
	if len(cat) < 40 {
		t.Fatalf("catalog has %d entries", len(cat))
	}
	for _, p := range KnownProviders() {
		if p.Model == "" {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			var c *Catalog
			if _, ok := c.Price(p.Name, p.Model); !ok {
				t.Fatalf("default model %s/%s has no price in the built-in table", p.Name, p.Model)
			}
			if w := c.Model(p.Name, p.Model).ContextWindow; w <= 0 {
				t.Errorf("context window %d", w)
			}
		})
	}
	for k, e := range cat {
		prov, _, ok := SplitTarget(k)
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
	cfg := &Catalog{
		Providers: map[string]string{
			"local": "openai-compatible",
			"work":  "anthropic",
		},
		Prices: map[string]Price{
			"openai/gpt-4.1":        {In: 1, Out: 2},
			"my-model":              {In: 0.5, Out: 0.5},
			"local/llama":           {In: 0, Out: 0},
			"work/claude-haiku-4-5": {In: 9, Out: 9},
		},
		Models: map[string]Model{
			"local/llama":                 {ContextWindow: 8192},
			"anthropic/claude-sonnet-4-5": {ContextWindow: 1000000, Prefill: true},
		},
	}
	tests := []struct {
		name, provider, model string
		cfg                   *Catalog
		price                 Price
		ok                    bool
		info                  Model
	}{
		{"catalog", "anthropic", "claude-sonnet-4-5", nil, Price{3, 15}, true, Model{ContextWindow: 200000, Prefill: true}},
		{"date suffix", "anthropic", "claude-sonnet-4-5-20250929", nil, Price{3, 15}, true, Model{ContextWindow: 200000, Prefill: true}},
		{"latest suffix", "mistral", "mistral-large-latest", nil, Price{2, 6}, true, Model{ContextWindow: 131072, Prefill: false}},
		{"openai no prefill", "openai", "gpt-4o-mini", nil, Price{0.15, 0.6}, true, Model{ContextWindow: 128000, Prefill: false}},
		{"slash model", "openrouter", "anthropic/claude-sonnet-4.5", nil, Price{3, 15}, true, Model{ContextWindow: 200000, Prefill: false}},
		{"unknown", "openai", "gpt-99", nil, Price{}, false, Model{}},
		{"unknown provider", "foo", "gpt-4.1", nil, Price{}, false, Model{}},
		{"override provider/model", "openai", "gpt-4.1", cfg, Price{1, 2}, true, Model{ContextWindow: 1047576, Prefill: false}},
		{"override bare model", "local", "my-model", cfg, Price{0.5, 0.5}, true, Model{}},
		{"override configured name", "local", "llama", cfg, Price{}, true, Model{ContextWindow: 8192, Prefill: false}},
		{"named provider uses its type", "work", "claude-opus-4-1", cfg, Price{15, 75}, true, Model{ContextWindow: 200000, Prefill: true}},
		{"named provider override", "work", "claude-haiku-4-5", cfg, Price{9, 9}, true, Model{ContextWindow: 200000, Prefill: true}},
		{"models override replaces", "anthropic", "claude-sonnet-4-5", cfg, Price{3, 15}, true, Model{ContextWindow: 1000000, Prefill: true}},
		{"embedding model", "gemini", "gemini-embedding-001", nil, Price{0.15, 0}, true, Model{ContextWindow: 2048, Dimensions: 3072, MinDimensions: 128}},
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
