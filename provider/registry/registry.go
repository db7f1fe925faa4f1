// Package registry builds provider adapters from their settings: one
// provider.Adapter per configured provider, of the adapter family its type
// names (see catalog.KnownProvider).
//
//	adapters, err := registry.Build(map[string]*registry.Settings{
//		"anthropic": {APIKey: os.Getenv("ANTHROPIC_API_KEY")},
//		"local":     {Type: "openai-compatible", BaseURL: "http://127.0.0.1:8000/v1", APIKey: registry.NoKey, Model: "llama"},
//	}, provider.NewHTTPClient(nil))
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

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/anthropic"
	"github.com/llmguard/llmguard/provider/gemini"
	"github.com/llmguard/llmguard/provider/openai"
)

// NoKey is the api_key value that deliberately sends no key (local servers).
const NoKey = "none"

// Settings are what an adapter needs to reach one provider account. The
// zero value means the documented defaults of the provider type named like
// the provider, with no key.
type Settings struct {
	// Type is the provider type, a name of catalog.KnownProviders
	// ("anthropic", "groq", "openai-compatible"; "" = the provider's name).
	Type string
	// APIKey is the key; NoKey sends none ("" is an error unless the type
	// needs no key). Environment variables are the caller's to read.
	APIKey string
	// BaseURL is the API's base URL ("" = the type's documented one).
	BaseURL string
	// APIVersion is Azure's api-version query parameter ("" = the type's default).
	APIVersion string
	// Model is the default model ("" = the type's; for azure the deployment).
	Model string
}

// New builds the adapter for the provider called name with settings s
// (nil means all defaults). Type defaults to name; an empty BaseURL or
// Model takes the documented default from catalog.KnownProvider. All
// adapters share client (nil: a new provider.NewHTTPClient(nil)).
//
// Errors are one line naming what to fix: an unknown type (the
// providers.NAME.type field), a missing key (the environment variable to
// set), a malformed base URL.
func New(name string, s *Settings, client *http.Client) (provider.Adapter, error) {
	c := defaults.Copy(s)
	typ := strings.ToLower(strings.TrimSpace(c.Type))
	field := "providers." + name + ".type"
	if typ == "" {
		typ = strings.ToLower(name)
		field = "providers." + name + " (the type defaults to the name)"
	}
	info, ok := catalog.KnownProvider(typ)
	if ok && info.Dialect == catalog.DialectSim {
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
	case catalog.DialectAnthropic:
		return anthropic.New(&anthropic.Config{Name: name, BaseURL: base, APIKey: key, Model: model, Client: client}), nil
	case catalog.DialectGemini:
		return gemini.New(&gemini.Config{Name: name, BaseURL: base, APIKey: key, Model: model, Client: client}), nil
	case catalog.DialectOpenAI, catalog.DialectAzure:
		ver := c.APIVersion
		if ver == "" {
			ver = info.APIVersion
		}
		return openai.New(&openai.Config{Name: name, BaseURL: base, APIKey: key, Model: model,
			Azure: info.Dialect == catalog.DialectAzure, APIVersion: ver, Client: client,
			Responses: info.Responses}), nil
	}
	return nil, fmt.Errorf("%s: provider type %q has no adapter", field, typ)
}

// Build builds an adapter for every provider of settings, keyed by the
// provider's name, sharing client (nil: a new provider.NewHTTPClient(nil)).
// The first error (in name order) is returned.
func Build(settings map[string]*Settings, client *http.Client) (map[string]provider.Adapter, error) {
	if client == nil {
		client = provider.NewHTTPClient(nil)
	}
	names := make([]string, 0, len(settings))
	for n := range settings {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make(map[string]provider.Adapter, len(names))
	for _, n := range names {
		a, err := New(n, settings[n], client)
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

func keyVars(info catalog.Provider) string {
	if len(info.KeyEnv) == 0 {
		return "api_key"
	}
	return strings.Join(info.KeyEnv, " or ")
}

func knownTypes() []string {
	var out []string
	for _, p := range catalog.KnownProviders() {
		if p.Dialect != catalog.DialectSim {
			out = append(out, p.Name)
		}
	}
	return out
}
