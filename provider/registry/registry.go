// Package registry builds provider adapters from configuration: one
// provider.Adapter per entry of config.Config.Providers, of the adapter
// family its type names (see config.KnownProvider).
//
//	adapters, err := registry.FromConfig(cfg, provider.NewHTTPClient(nil))
//	if err != nil {
//		return err // one line naming the field or variable to fix
//	}
//	resp, err := adapters["anthropic"].Chat(ctx, req)
package registry

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/anthropic"
	"github.com/llmguard/llmguard/provider/gemini"
	"github.com/llmguard/llmguard/provider/openai"
)

// NoKey is the api_key value that deliberately sends no key (local servers).
const NoKey = "none"

// New builds the adapter for the provider called name with settings p
// (nil means all defaults). Type defaults to name; an empty BaseURL or
// Model takes the documented default from config.KnownProvider. All
// adapters share client (nil: a new provider.NewHTTPClient(nil)).
//
// Errors are one line naming what to fix: an unknown type (the
// providers.NAME.type field), a missing key (the environment variable to
// set), a malformed base URL.
func New(name string, p *config.Provider, client *http.Client) (provider.Adapter, error) {
	var c config.Provider
	if p != nil {
		c = *p
	}
	typ := strings.ToLower(strings.TrimSpace(c.Type))
	field := "providers." + name + ".type"
	if typ == "" {
		typ = strings.ToLower(name)
		field = "providers." + name + " (the type defaults to the name)"
	}
	info, ok := config.KnownProvider(typ)
	if ok && info.Dialect == config.DialectSim {
		// What zero config gives a library user with no key in the
		// environment: say so, not "unknown type".
		return nil, fmt.Errorf("providers.%s: the simulated provider (what zero config falls back to when no provider key is set) is served by the llmguard command, not the library: set a provider key such as ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY", name)
	}
	if !ok {
		return nil, fmt.Errorf("%s: unknown provider type %q (known: %s)", field, typ, strings.Join(knownTypes(), ", "))
	}
	key := strings.TrimSpace(c.APIKey)
	switch {
	case strings.EqualFold(key, NoKey):
		key = ""
	case key == "" && !info.KeyOptional:
		return nil, fmt.Errorf("providers.%s.api_key is empty: set %s (MCP clients don't load your shell profile: put it in the client's env block)",
			name, keyVars(info))
	}
	base := strings.TrimSpace(c.BaseURL)
	if base == "" {
		base = info.BaseURL
	}
	if base == "" {
		v := info.BaseURLEnv
		if v == "" {
			v = "base_url"
		}
		return nil, fmt.Errorf("providers.%s.base_url is empty: set %s", name, v)
	}
	if err := checkURL(base); err != nil {
		return nil, fmt.Errorf("providers.%s.base_url %q: %v", name, base, err)
	}
	model := c.Model
	if model == "" {
		model = info.Model
	}
	if client == nil {
		client = provider.NewHTTPClient(nil)
	}
	switch info.Dialect {
	case config.DialectAnthropic:
		return anthropic.New(&anthropic.Config{Name: name, BaseURL: base, APIKey: key, Model: model, Client: client}), nil
	case config.DialectGemini:
		return gemini.New(&gemini.Config{Name: name, BaseURL: base, APIKey: key, Model: model, Client: client}), nil
	case config.DialectOpenAI, config.DialectAzure:
		ver := c.APIVersion
		if ver == "" {
			ver = info.APIVersion
		}
		return openai.New(&openai.Config{Name: name, BaseURL: base, APIKey: key, Model: model,
			Azure: info.Dialect == config.DialectAzure, APIVersion: ver, Client: client,
			Responses: RelaysResponses(name, &c)}), nil
	}
	return nil, fmt.Errorf("%s: provider type %q has no adapter", field, typ)
}

// RelaysResponses reports whether the provider called name with settings p
// (nil: all defaults) serves OpenAI's Responses API itself, so that Responses
// API requests are relayed to it unchanged rather than translated: a
// provider of type openai (whatever its name or base URL).
func RelaysResponses(name string, p *config.Provider) bool {
	typ := name
	if p != nil && strings.TrimSpace(p.Type) != "" {
		typ = p.Type
	}
	return strings.EqualFold(strings.TrimSpace(typ), "openai")
}

// FromConfig builds an adapter for every provider in cfg.Providers, sharing
// client. The first error (in name order) is returned.
func FromConfig(cfg *config.Config, client *http.Client) (map[string]provider.Adapter, error) {
	if cfg == nil {
		return map[string]provider.Adapter{}, nil
	}
	if client == nil {
		client = provider.NewHTTPClient(nil)
	}
	names := make([]string, 0, len(cfg.Providers))
	for n := range cfg.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make(map[string]provider.Adapter, len(names))
	for _, n := range names {
		a, err := New(n, cfg.Providers[n], client)
		if err != nil {
			return nil, err
		}
		out[n] = a
	}
	return out, nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("must start with http:// or https://")
	}
	if u.Host == "" {
		return fmt.Errorf("has no host")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("must not have a query or fragment")
	}
	return nil
}

func keyVars(info config.ProviderInfo) string {
	if len(info.KeyEnv) == 0 {
		return "api_key"
	}
	return strings.Join(info.KeyEnv, " or ")
}

func knownTypes() []string {
	var out []string
	for _, p := range config.KnownProviders() {
		if p.Dialect != config.DialectSim {
			out = append(out, p.Name)
		}
	}
	return out
}
