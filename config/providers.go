package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/llmguard/llmguard/catalog"
)

// Providers: each configured provider completed from the environment and
// the known-provider table, the providers the environment alone gives
// (zero config), and where LoadDefault finds the configuration.

// KeyVar returns the environment variable the API key was read from, or ""
// when it came from the config file (or there is none). Doctor uses it to
// say which variable to fix.
func (p *Provider) KeyVar() string { return p.keyVar }

// Info returns the known-provider table entry of the provider's Type
// (its dialect, variables and defaults); ok is false for an unknown type.
func (p *Provider) Info() (catalog.Provider, bool) { return catalog.KnownProvider(p.Type) }

// implicitProvider returns the configured provider name, adding it from the
// environment when it is a known provider type not listed in providers.
func (c *Config) implicitProvider(name string, getenv func(string) string) *Provider {
	if p, ok := c.Providers[name]; ok {
		return p
	}
	info, ok := catalog.KnownProvider(name)
	if !ok || name != info.Name || info.Name == "openai-compatible" {
		return nil
	}
	p := &Provider{}
	p.provision(name, getenv)
	c.Providers[name] = p
	if c.implicit == nil {
		c.implicit = map[string]bool{}
	}
	c.implicit[name] = true
	return p
}

func (p *Provider) provision(name string, getenv func(string) string) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	p.Type = strings.ToLower(strings.TrimSpace(p.Type))
	if p.Type == "" {
		if _, ok := catalog.KnownProvider(name); ok {
			p.Type = strings.ToLower(name)
		}
	}
	info, ok := catalog.KnownProvider(p.Type)
	if !ok {
		return
	}
	p.APIKey = strings.TrimRightFunc(p.APIKey, func(r rune) bool { return r == '\n' || r == '\r' })
	if p.APIKey == "" {
		p.APIKey, p.keyVar = info.EnvKey(getenv)
	}
	if p.BaseURL == "" && info.BaseURLEnv != "" {
		p.BaseURL = strings.TrimSpace(getenv(info.BaseURLEnv))
	}
	if p.BaseURL == "" {
		p.BaseURL = info.BaseURL
	}
	p.BaseURL = strings.TrimRight(strings.TrimSpace(p.BaseURL), "/")
	if p.Model == "" && info.ModelEnv != "" {
		p.Model = strings.TrimSpace(getenv(info.ModelEnv))
	}
	if p.Model == "" {
		p.Model = info.Model
	}
	if info.Dialect == catalog.DialectAzure {
		if p.APIVersion == "" && info.APIVersionEnv != "" {
			p.APIVersion = strings.TrimSpace(getenv(info.APIVersionEnv))
		}
		if p.APIVersion == "" {
			p.APIVersion = info.APIVersion
		}
	}
}

// envProviders returns the providers with a key in the environment, named
// by their type; azure also needs AZURE_OPENAI_ENDPOINT and
// AZURE_OPENAI_DEPLOYMENT. With none, it returns the simulated provider sim.
func envProviders(getenv func(string) string) map[string]*Provider {
	out := map[string]*Provider{}
	if getenv != nil {
		for _, info := range catalog.KnownProviders() {
			if len(info.KeyEnv) == 0 {
				continue
			}
			if k, _ := info.EnvKey(getenv); k == "" {
				continue
			}
			if info.Dialect == catalog.DialectAzure && (getenv(info.BaseURLEnv) == "" || getenv(info.ModelEnv) == "") {
				continue
			}
			p := &Provider{}
			p.provision(info.Name, getenv)
			out[info.Name] = p
		}
	}
	if len(out) == 0 {
		p := &Provider{Type: "sim"}
		p.provision("sim", getenv)
		out["sim"] = p
	}
	return out
}

// FromEnv builds the zero configuration: the providers whose keys are in the
// environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY or
// GOOGLE_API_KEY, ...), and route "default" cascading over their default
// models cheapest first. With no key at all it uses the embedded simulated
// provider "sim", so every command works on a fresh machine. Source is
// "environment". The result is validated.
func FromEnv(getenv func(string) string) (*Config, error) {
	c := &Config{Source: SourceEnvironment, Providers: envProviders(getenv)}
	c.Provision(getenv)
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// LoadDefault loads the configuration when no file was named: the file in
// $LLMGUARD_CONFIG when set, else llmguard.yaml in the working directory
// when present, else FromEnv.
func LoadDefault(getenv func(string) string) (*Config, error) {
	if getenv != nil {
		if p := getenv("LLMGUARD_CONFIG"); p != "" {
			return Load(p, getenv)
		}
	}
	if _, err := os.Stat(DefaultFile); err == nil {
		return Load(DefaultFile, getenv)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("config: %w", err)
	}
	return FromEnv(getenv)
}
