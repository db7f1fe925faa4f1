// Package config is llmguard's YAML configuration: the schema (config.go)
// and Load: read, expand ${VAR} and ${VAR:-default}, decode strictly
// (unknown keys are errors with file:line:column and the field path), apply
// defaults and the environment, Validate. It decodes into the types of the
// packages that use them: Catalog gives the catalog.Catalog of the
// configured providers and the pricing and models overrides (the table of
// known providers and the built-in models are package catalog's).
// docs/config.md documents every key.
//
//	cfg, err := config.Load("llmguard.yaml", os.Getenv) // or config.LoadDefault(os.Getenv)
//	if err != nil {
//		log.Fatal(err) // one line per problem: "llmguard.yaml:7:5: routes.default.retry.budget: must be in [0,1]"
//	}
//	r, cat := cfg.Routes["default"], cfg.Catalog()
//	for i := range r.Targets {
//		pol := r.TargetPolicy(i) // the route's policy with the target's overrides merged
//		price, _ := cat.Price(pol.Provider, pol.Model)
//		log.Println(pol.Target, pol.Retry.MaxAttempts, *pol.Breaker.Failures, price.In)
//	}
//
// # What a loaded Config guarantees
//
// After Load (or Parse + Validate, or FromEnv):
//   - every provider has a Type, and its APIKey, BaseURL (no trailing slash),
//     Model and, for azure, APIVersion are filled from the config, else from
//     the provider's environment variables (ANTHROPIC_API_KEY,
//     ANTHROPIC_BASE_URL, ANTHROPIC_MODEL, ...; see catalog.KnownProviders), else
//     from the documented defaults. APIKey "none" means send no key;
//   - a known provider used by a target but not listed under providers is
//     present, configured from the environment;
//   - route "default" exists; every target is "provider/model" naming a
//     configured provider; targets of "order: cost" routes are sorted
//     cheapest first, so the engine walks Targets in order whatever Order says;
//   - every policy field holds its effective value. Keys absent from the
//     file take the documented defaults (DefaultRoute); an explicit value,
//     0 included, is kept: retry.budget 0 allows no retries beyond
//     min_retry_concurrency, breaker.failures 0 sets no floor on the
//     failures that open a breaker and breaker.failure_ratio 0 never opens
//     it on ill health, hedge_after 0 and cache.ttl 0 are off,
//     max_concurrency 0 is unlimited;
//   - per-target overrides are merged by Route.TargetPolicy: each non-zero
//     field of a target's retry or breaker object, and a non-zero
//     max_concurrency, replaces the route's. The engine should call it rather
//     than merge itself.
//
// Config.Catalog's Price and Model look a model up in the config's pricing
// and models keys first, then in the built-in catalogue, trying the
// configured provider name, its type, and the model without a version
// suffix.
//
// # Concurrency
//
// Load, Parse, FromEnv and Provision build a Config; once built, a Config is
// read-only and all its methods are safe for concurrent use. The zero Config
// is empty; call Provision to complete a Config built in Go.
//
// # Errors
//
// Errors are *FieldError values joined with errors.Join: one line each,
// "file:line:col: field.path: message", naming the variable to set when a
// key or endpoint is missing, and never containing a key. Redacted and
// EffectiveYAML give a printable copy with keys masked ("sk-ant-…abcd").
package config
