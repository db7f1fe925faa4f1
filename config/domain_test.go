package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/provider/registry"
)

func TestDecodedIntoDomainTypes(t *testing.T) {
	c, err := Parse("t.yaml", []byte(`
providers:
  work: {type: anthropic, api_key: sk-ant-test}
  local: {type: openai-compatible, base_url: "http://127.0.0.1:8000/v1/", api_key: none, model: llama}
default_provider: work
routes:
  default: {targets: [work/claude-haiku-4-5, openai/gpt-4.1]}
pricing:
  local/llama: {in: 0.1, out: 0.2}
models:
  llama: {context_window: 8192}
`), func(k string) string { return map[string]string{"OPENAI_API_KEY": "sk-env"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := &catalog.Catalog{
		Providers:       map[string]string{"work": "anthropic", "local": "openai-compatible", "openai": "openai"},
		DefaultProvider: "work",
		Prices:          map[string]catalog.Price{"local/llama": {In: 0.1, Out: 0.2}},
		Models:          map[string]catalog.Model{"llama": {ContextWindow: 8192}},
	}
	if d := cmp.Diff(want, c.Catalog()); d != "" {
		t.Errorf("Catalog (-want +got):\n%s", d)
	}
	wantSettings := map[string]*registry.Settings{
		"work":   {Type: "anthropic", APIKey: "sk-ant-test", BaseURL: "https://api.anthropic.com", Model: "claude-sonnet-4-5"},
		"local":  {Type: "openai-compatible", APIKey: "none", BaseURL: "http://127.0.0.1:8000/v1", Model: "llama"},
		"openai": {Type: "openai", APIKey: "sk-env", BaseURL: "https://api.openai.com/v1", Model: "gpt-4.1"},
	}
	if d := cmp.Diff(wantSettings, c.ProviderSettings()); d != "" {
		t.Errorf("ProviderSettings (-want +got):\n%s", d)
	}
	if (*Provider)(nil).Settings() != nil {
		t.Error("a nil provider has settings")
	}
}
