package config

import (
	_ "embed"
	"fmt"
	"maps"
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

// catalog is the parsed built-in catalogue: flat ("provider/model") and
// indexed by provider type then model, so lookups need no concatenation.
type catalog struct {
	flat  map[string]CatalogEntry
	index map[string]map[string]CatalogEntry
}

// builtinCatalog parses the embedded catalogue once. The file is compiled in
// and covered by a test, so a parse error is a build defect: it panics.
var builtinCatalog = sync.OnceValue(func() *catalog {
	m, err := parseCatalog(catalogYAML)
	if err != nil {
		panic(err)
	}
	c := &catalog{flat: m, index: map[string]map[string]CatalogEntry{}}
	for k, e := range m {
		prov, model, _ := strings.Cut(k, "/")
		if c.index[prov] == nil {
			c.index[prov] = map[string]CatalogEntry{}
		}
		c.index[prov][model] = e
	}
	return c
})

func parseCatalog(data []byte) (map[string]CatalogEntry, error) {
	var f catalogFile
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.DisallowUnknownField()); err != nil {
		return nil, fmt.Errorf("config: built-in catalog: %w", err)
	}
	for k := range f.Models {
		if _, _, ok := splitTarget(k); !ok {
			return nil, fmt.Errorf("config: built-in catalog: key %q is not provider/model", k)
		}
	}
	return f.Models, nil
}

// Catalog returns a copy of the built-in model catalogue keyed
// "provider/model" (provider is a provider type of KnownProviders). It is
// safe for concurrent use.
func Catalog() map[string]CatalogEntry {
	return maps.Clone(builtinCatalog().flat)
}

// baseModel strips one version suffix providers append to a model's base
// name ("-20250929", "-2025-04-14", "-latest", "-001"); "" when there is none.
func baseModel(model string) string {
	i := strings.LastIndexByte(model, '-')
	if i <= 0 {
		return ""
	}
	suf := model[i+1:]
	switch {
	case suf == "latest", len(suf) == 8 && allDigits(suf), len(suf) == 3 && allDigits(suf):
		return model[:i]
	case len(suf) == 2 && allDigits(suf) && len(model) >= 11 && model[i-3] == '-' && model[i-8] == '-' &&
		allDigits(model[i-2:i]) && allDigits(model[i-7:i-3]):
		return model[:i-8] // -YYYY-MM-DD
	}
	return ""
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
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

// lookup tries, most specific first, the configured provider name, then
// the provider type, each with the model as given and then without its
// version suffix; over lists config overrides keyed "provider/model" or
// "model", and cat is the built-in catalogue.
func lookup[V any](c *Config, provider, model string, over map[string]V, cat func(CatalogEntry) V) (V, bool) {
	typ := c.providerType(provider)
	base := baseModel(model)
	if len(over) > 0 {
		for _, m := range [2]string{model, base} {
			if m == "" {
				continue
			}
			if v, ok := over[provider+"/"+m]; ok {
				return v, true
			}
			if typ != provider {
				if v, ok := over[typ+"/"+m]; ok {
					return v, true
				}
			}
			if v, ok := over[m]; ok {
				return v, true
			}
		}
	}
	idx := builtinCatalog().index
	for _, p := range [2]string{provider, typ} {
		if models := idx[p]; models != nil {
			if e, ok := models[model]; ok {
				return cat(e), true
			}
			if e, ok := models[base]; ok && base != "" {
				return cat(e), true
			}
		}
	}
	var zero V
	return zero, false
}

// Price returns the $/MTok price of model on the configured provider: the
// config's pricing key "provider/model" (or "type/model", or "model") first,
// then the built-in catalogue. ok is false when the price is unknown. A nil
// *Config uses the catalogue alone. Safe for concurrent use once loaded;
// allocation-free unless the config has pricing overrides.
func (c *Config) Price(provider, model string) (Price, bool) {
	var over map[string]Price
	if c != nil {
		over = c.Pricing
	}
	return lookup(c, provider, model, over, func(e CatalogEntry) Price { return e.Price })
}

// Model returns what is known of model on the configured provider: an entry
// of the config's models key ("provider/model", "type/model" or "model")
// replaces the built-in one entirely. Unknown models return the zero
// ModelInfo (ContextWindow 0 = unknown, no prefill). A nil *Config uses the
// catalogue alone. Safe for concurrent use once loaded.
func (c *Config) Model(provider, model string) ModelInfo {
	var over map[string]ModelInfo
	if c != nil {
		over = c.Models
	}
	m, _ := lookup(c, provider, model, over, func(e CatalogEntry) ModelInfo { return e.ModelInfo })
	return m
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
	provider, model, ok = strings.Cut(strings.TrimSpace(s), "/")
	return provider, model, ok && provider != "" && model != ""
}
