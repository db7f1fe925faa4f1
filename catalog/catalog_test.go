package catalog

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSortByCost(t *testing.T) {
	type target struct {
		name  string
		price Price
		known bool
	}
	ts := []target{
		{"unknown-1", Price{}, false},
		{"sonnet", Price{3, 15}, true},  // blended 6
		{"mini", Price{0.4, 1.6}, true}, // 0.7
		{"unknown-2", Price{}, false},
		{"free", Price{}, true},          // 0: known and free comes first
		{"flash", Price{0.3, 2.5}, true}, // 0.85
		{"mini-twin", Price{0.4, 1.6}, true},
	}
	SortByCost(ts, func(t target) (Price, bool) { return t.price, t.known })
	var got []string
	for _, t := range ts {
		got = append(got, t.name)
	}
	want := []string{"free", "mini", "mini-twin", "flash", "sonnet", "unknown-1", "unknown-2"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
}

func TestConfiguredProvider(t *testing.T) {
	c := &Catalog{Providers: map[string]string{"work": "anthropic", "openai": "", "gpt": "openai", "mine": "no-such-type"}}
	tests := []struct {
		name              string
		configured, known bool
		dialect           string
		responses         bool
	}{
		{"work", true, true, DialectAnthropic, false},
		{"openai", true, true, DialectOpenAI, true}, // no type: the name is the type
		{"gpt", true, true, DialectOpenAI, true},
		{"mine", true, false, "", false},
		{"anthropic", false, false, "", false}, // known, but not configured
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := c.Configured(tt.name); ok != tt.configured {
				t.Errorf("Configured = %v", ok)
			}
			p, ok := c.Provider(tt.name)
			if ok != tt.known || p.Dialect != tt.dialect || p.Responses != tt.responses {
				t.Errorf("Provider = %+v, %v", p, ok)
			}
		})
	}
	var none *Catalog
	if _, ok := none.Configured("openai"); ok {
		t.Error("a nil Catalog has a configured provider")
	}
	if _, ok := none.Provider("openai"); ok {
		t.Error("a nil Catalog has a configured provider")
	}
}

func TestSplitTarget(t *testing.T) {
	tests := []struct {
		in, prov, model string
		ok              bool
	}{
		{"anthropic/claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", true},
		{" openrouter/anthropic/claude-sonnet-4.5 ", "openrouter", "anthropic/claude-sonnet-4.5", true},
		{"anthropic", "anthropic", "", false},
		{"/m", "", "m", false},
		{"p/", "p", "", false},
	}
	for _, tt := range tests {
		p, m, ok := SplitTarget(tt.in)
		if p != tt.prov || m != tt.model || ok != tt.ok {
			t.Errorf("SplitTarget(%q) = %q, %q, %v", tt.in, p, m, ok)
		}
	}
}

func BenchmarkPrice(b *testing.B) {
	c := &Catalog{Providers: map[string]string{"anthropic": "anthropic"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Price("anthropic", "claude-sonnet-4-5-20250929"); !ok {
			b.Fatal("no price")
		}
	}
}
