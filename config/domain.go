package config

import (
	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/provider/registry"
)

// What a configuration decodes into: the types of the packages that use
// them. Call these on a provisioned Config (after Load, Parse, FromEnv or
// Provision); each returns a fresh value that shares nothing with c.

// Catalog returns what the configuration says of its providers and models:
// each configured provider's type (a provider a route target or
// default_provider names is configured too), default_provider, and the
// pricing and models overrides of the built-in table.
func (c *Config) Catalog() *catalog.Catalog {
	cat := &catalog.Catalog{DefaultProvider: c.DefaultProvider, Providers: make(map[string]string, len(c.Providers))}
	for name, p := range c.Providers {
		typ := ""
		if p != nil {
			typ = p.Type
		}
		cat.Providers[name] = typ
	}
	if len(c.Pricing) > 0 {
		cat.Prices = make(map[string]catalog.Price, len(c.Pricing))
		for k, p := range c.Pricing {
			cat.Prices[k] = catalog.Price(p)
		}
	}
	if len(c.Models) > 0 {
		cat.Models = make(map[string]catalog.Model, len(c.Models))
		for k, m := range c.Models {
			cat.Models[k] = catalog.Model(m)
		}
	}
	return cat
}

// ProviderSettings returns the settings of every configured provider, by
// name, for registry.Build: keys, base URLs, models and API versions as
// resolved from the file, the environment and the defaults.
func (c *Config) ProviderSettings() map[string]*registry.Settings {
	out := make(map[string]*registry.Settings, len(c.Providers))
	for name, p := range c.Providers {
		out[name] = p.Settings()
	}
	return out
}

// Settings returns the provider's settings for registry.New (nil for a nil
// *Provider: all defaults).
func (p *Provider) Settings() *registry.Settings {
	if p == nil {
		return nil
	}
	return &registry.Settings{Type: p.Type, APIKey: p.APIKey, BaseURL: p.BaseURL, APIVersion: p.APIVersion, Model: p.Model}
}
