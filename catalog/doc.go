// Package catalog is what llmguard knows about providers and models, as Go
// values with no I/O: the table of known provider types (their wire
// dialect, key and base URL variables, documented base URL and default
// model: KnownProviders), the built-in model table (list prices, context
// windows, assistant prefill, embedding dimensions: Builtin), and Catalog,
// which looks a model up for a deployment: its configured providers and
// their types, its overrides of the built-in table, and the names clients
// send (ResolveModel).
//
// The adapters' registry, the engine and the edges use it; the config
// package decodes YAML and the environment into it.
//
//	cat := &catalog.Catalog{
//		Providers: map[string]string{"work": "anthropic", "openai": "openai"},
//		Prices:    map[string]catalog.Price{"my-finetune": {In: 0.5, Out: 1.5}},
//	}
//	p, _ := cat.Price("work", "claude-haiku-4-5-20251001") // anthropic's entry, by its base name
//	fmt.Println(p.In, cat.Model("openai", "gpt-4.1").ContextWindow) // 1 1047576
//
// Everything here is safe for concurrent use; a Catalog must not be changed
// once in use.
package catalog
