package config

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"
)

//go:embed catalog.yaml
var catalogYAML []byte

// CatalogEntry is one model of the built-in catalogue (config/catalog.yaml).
type CatalogEntry struct {
	Price     `yaml:",inline"`
	ModelInfo `yaml:",inline"`
}

type catalogFile struct {
	Models map[string]CatalogEntry `yaml:"models"`
}

// builtinCatalog parses the embedded catalogue once. The file is compiled in
// and covered by a test, so a parse error is a build defect: it panics.
var builtinCatalog = sync.OnceValue(func() map[string]CatalogEntry {
	m, err := parseCatalog(catalogYAML)
	if err != nil {
		panic(err)
	}
	return m
})

func parseCatalog(data []byte) (map[string]CatalogEntry, error) {
	var f catalogFile
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.DisallowUnknownField()); err != nil {
		return nil, fmt.Errorf("config: built-in catalog: %w", err)
	}
	return f.Models, nil
}

// Catalog returns a copy of the built-in model catalogue keyed
// "provider/model" (provider is a provider type of KnownProviders). It is
// safe for concurrent use.
func Catalog() map[string]CatalogEntry {
	src := builtinCatalog()
	out := make(map[string]CatalogEntry, len(src))
	for k, v := range src {
		out[k] = v
	}
	return out
}

// dateSuffix matches the version suffixes providers append to a model's base
// name: "-20250929", "-2025-04-14", "-latest", "-001".
var dateSuffix = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2}|latest|\d{3})$`)

// baseModel strips one version suffix; it returns "" when there is none.
func baseModel(model string) string {
	if b := dateSuffix.ReplaceAllString(model, ""); b != model {
		return b
	}
	return ""
}

// providerType is the type of the configured provider name, or the name
// itself when it is not configured (a known provider used directly).
func (c *Config) providerType(name string) string {
	if c != nil {
		if p, ok := c.Providers[name]; ok && p != nil && p.Type != "" {
			return p.Type
		}
	}
	return name
}

// lookupKeys lists the keys tried for provider/model, most specific first:
// the configured name, then the provider type, each with the model as given
// and then without its version suffix. bare adds the model alone (config
// overrides may be keyed by model only).
func (c *Config) lookupKeys(provider, model string, bare bool) []string {
	typ := c.providerType(provider)
	models := []string{model}
	if b := baseModel(model); b != "" {
		models = append(models, b)
	}
	keys := make([]string, 0, 6)
	for _, m := range models {
		keys = append(keys, provider+"/"+m)
		if typ != provider {
			keys = append(keys, typ+"/"+m)
		}
		if bare {
			keys = append(keys, m)
		}
	}
	return keys
}

// Price returns the $/MTok price of model on the configured provider: the
// config's pricing key "provider/model" (or "type/model", or "model") first,
// then the built-in catalogue. ok is false when the price is unknown. A nil
// *Config uses the catalogue alone. Safe for concurrent use once loaded.
func (c *Config) Price(provider, model string) (Price, bool) {
	if c != nil && len(c.Pricing) > 0 {
		for _, k := range c.lookupKeys(provider, model, true) {
			if p, ok := c.Pricing[k]; ok {
				return p, true
			}
		}
	}
	cat := builtinCatalog()
	for _, k := range c.lookupKeys(provider, model, false) {
		if e, ok := cat[k]; ok {
			return e.Price, true
		}
	}
	return Price{}, false
}

// Model returns what is known of model on the configured provider: an entry
// of the config's models key ("provider/model", "type/model" or "model")
// replaces the built-in one entirely. Unknown models return the zero
// ModelInfo (ContextWindow 0 = unknown, no prefill). A nil *Config uses the
// catalogue alone. Safe for concurrent use once loaded.
func (c *Config) Model(provider, model string) ModelInfo {
	if c != nil && len(c.Models) > 0 {
		for _, k := range c.lookupKeys(provider, model, true) {
			if m, ok := c.Models[k]; ok {
				return m
			}
		}
	}
	cat := builtinCatalog()
	for _, k := range c.lookupKeys(provider, model, false) {
		if e, ok := cat[k]; ok {
			return e.ModelInfo
		}
	}
	return ModelInfo{}
}

// Blended is the price of a typical call mix, three input tokens for each
// output token, in $/MTok: the sort key of `order: cost`.
func (p Price) Blended() float64 { return (3*p.In + p.Out) / 4 }

// Cost is the dollar cost of a call with the given token counts.
func (p Price) Cost(inTokens, outTokens int) float64 {
	return (float64(inTokens)*p.In + float64(outTokens)*p.Out) / 1e6
}

// splitTarget splits "provider/model" at the first slash (models may hold
// slashes themselves: "openrouter/anthropic/claude-sonnet-4.5").
func splitTarget(s string) (provider, model string, ok bool) {
	provider, model, ok = strings.Cut(s, "/")
	return provider, model, ok && provider != "" && model != ""
}
