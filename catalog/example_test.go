package catalog_test

import (
	"fmt"

	"github.com/llmguard/llmguard/catalog"
)

// A Catalog looks models up for one deployment: a configured name finds its
// type's entries, a dated model its base entry, and overrides come first.
func ExampleCatalog() {
	cat := &catalog.Catalog{
		Providers: map[string]string{"work": "anthropic", "openai": "openai"},
		Prices:    map[string]catalog.Price{"my-finetune": {In: 0.5, Out: 1.5}},
	}
	p, _ := cat.Price("work", "claude-haiku-4-5-20251001")
	fmt.Println(p.In, p.Out, cat.Model("work", "claude-haiku-4-5").Prefill)
	fmt.Println(cat.Model("openai", "gpt-4.1").ContextWindow)
	p, _ = cat.Price("openai", "my-finetune")
	fmt.Printf("$%.4f\n", p.Cost(1000, 1000))
	_, ok := cat.Price("openai", "gpt-99")
	fmt.Println(ok)
	// Output:
	// 1 5 true
	// 1047576
	// $0.0020
	// false
}

// ResolveModel maps what a client sends as its model to what the engine
// runs; an unknown name is one line saying how to fix it.
func ExampleCatalog_ResolveModel() {
	cat := &catalog.Catalog{Providers: map[string]string{"openai": "openai", "anthropic": "anthropic"}}
	routes := map[string][]string{"default": {"openai/gpt-4.1", "anthropic/claude-sonnet-4-5"}}
	for _, name := range []string{"default", "claude-sonnet-4-5", "anthropic/claude-opus-4-1", "gpt-5"} {
		fmt.Println(cat.ResolveModel(name, routes))
	}
	// Output:
	// default <nil>
	// anthropic/claude-sonnet-4-5 <nil>
	// anthropic/claude-opus-4-1 <nil>
	//  unknown model "gpt-5": send a route name (default) or provider/model (e.g. openai/gpt-5), or set default_provider in the config to send bare model names to one provider
}

func ExampleKnownProvider() {
	p, _ := catalog.KnownProvider("gemini")
	fmt.Println(p.Dialect, p.BaseURL, p.Model, p.KeyEnv)
	// Output:
	// gemini https://generativelanguage.googleapis.com gemini-2.5-flash [GEMINI_API_KEY GOOGLE_API_KEY]
}
