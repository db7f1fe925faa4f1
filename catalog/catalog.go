package catalog

import (
	"slices"
	"strings"
)

// Catalog is what one deployment knows of its providers and models: the
// providers it configured and their types, where bare model names go, and
// its overrides of the built-in model table. A nil *Catalog is the built-in
// table alone, with no provider configured; so is the zero value. A Catalog
// must not be changed once in use; its methods are safe for concurrent use.
type Catalog struct {
	// Providers maps each configured provider name to its provider type (a
	// name of KnownProviders: "work": "anthropic"), so a model on "work"
	// finds anthropic's entries. A name absent from it is not configured,
	// and lookups take it as its own type.
	Providers map[string]string
	// DefaultProvider takes the bare model names that no route serves (see
	// ResolveModel; "" = none).
	DefaultProvider string
	// Prices overrides the built-in prices, keyed "provider/model" (the
	// configured name or its type) or a bare "model".
	Prices map[string]Price
	// Models overrides the built-in model facts, keyed as Prices; an entry
	// replaces the built-in one entirely.
	Models map[string]Model
}

// providerType is the type of the configured provider name, or the name
// itself when it is not configured (a known provider used directly).
func (c *Catalog) providerType(name string) string {
	if c != nil {
		if t := c.Providers[name]; t != "" {
			return t
		}
	}
	return name
}

// lookup tries, most specific first, the configured provider name, then its
// type, each with the model as given and then without its version suffix:
// in overrides (keyed "provider/model" or "model") first, then in the
// built-in table, whose entry field picks.
func lookup[V any](c *Catalog, provider, model string, overrides map[string]V, field func(Entry) V) (V, bool) {
	typ := c.providerType(provider)
	base := baseModel(model)
	if len(overrides) > 0 {
		for _, m := range [2]string{model, base} {
			if m == "" {
				continue
			}
			if v, ok := overrides[provider+"/"+m]; ok {
				return v, true
			}
			if typ != provider {
				if v, ok := overrides[typ+"/"+m]; ok {
					return v, true
				}
			}
			if v, ok := overrides[m]; ok {
				return v, true
			}
		}
	}
	for _, p := range [2]string{provider, typ} {
		if models := builtin[p]; models != nil {
			if e, ok := models[model]; ok {
				return field(e), true
			}
			if e, ok := models[base]; ok && base != "" {
				return field(e), true
			}
		}
	}
	var zero V
	return zero, false
}

// Price returns the $/MTok price of model on provider (a configured name or
// a provider type): the Prices entry "provider/model" (or "type/model", or
// "model") first, then the built-in table. ok is false when the price is
// unknown. It allocates nothing unless c has Prices.
func (c *Catalog) Price(provider, model string) (Price, bool) {
	var overrides map[string]Price
	if c != nil {
		overrides = c.Prices
	}
	return lookup(c, provider, model, overrides, func(e Entry) Price { return e.Price })
}

// Model returns what is known of model on provider: a Models entry
// ("provider/model", "type/model" or "model") replaces the built-in one
// entirely. An unknown model is the zero Model.
func (c *Catalog) Model(provider, model string) Model {
	var overrides map[string]Model
	if c != nil {
		overrides = c.Models
	}
	m, _ := lookup(c, provider, model, overrides, func(e Entry) Model { return e.Model })
	return m
}

// Configured returns the type of the configured provider name; ok is false
// when the catalogue has no such provider.
func (c *Catalog) Configured(name string) (typ string, ok bool) {
	if c == nil {
		return "", false
	}
	typ, ok = c.Providers[name]
	return typ, ok
}

// Provider returns the known-provider table entry of the type of the
// configured provider name (its dialect, quirks and defaults); ok is false
// when name is not configured or its type is unknown.
func (c *Catalog) Provider(name string) (Provider, bool) {
	if _, ok := c.Configured(name); !ok {
		return Provider{}, false
	}
	return KnownProvider(c.providerType(name))
}

// SortByCost sorts s cheapest first by blended price (Price.Blended), the
// order of `order: cost` routes: elements whose price is unknown go last,
// ties keep their order. price returns an element's price and whether it
// is known.
func SortByCost[T any](s []T, price func(T) (Price, bool)) {
	slices.SortStableFunc(s, func(a, b T) int {
		pa, oka := price(a)
		pb, okb := price(b)
		switch {
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		case pa.Blended() < pb.Blended():
			return -1
		case pa.Blended() > pb.Blended():
			return 1
		}
		return 0
	})
}

// SplitTarget splits a target "provider/model" at the first slash (models
// may hold slashes themselves: "openrouter/anthropic/claude-sonnet-4.5"),
// surrounding spaces ignored; ok is false unless both parts are non-empty.
func SplitTarget(s string) (provider, model string, ok bool) {
	provider, model, ok = strings.Cut(strings.TrimSpace(s), "/")
	return provider, model, ok && provider != "" && model != ""
}
