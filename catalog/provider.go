package catalog

import (
	"slices"
	"strings"
)

// Dialects: the wire protocol an adapter speaks. Every known provider maps to one.
const (
	DialectAnthropic = "anthropic"
	DialectOpenAI    = "openai" // OpenAI chat completions and the compatible family
	DialectAzure     = "azure"
	DialectGemini    = "gemini"
	// DialectSim is the embedded simulated provider, served in-process by the
	// mock when no key is configured at all.
	DialectSim = "sim"
)

// SamplingTarget is the route target that asks the connected MCP client's own
// model (sampling/createMessage). It needs no configured provider; only
// `llmguard mcp` can serve it, elsewhere it is skipped.
const SamplingTarget = SamplingProvider + "/sampling"

// SamplingProvider is the provider part of SamplingTarget.
const SamplingProvider = "mcp"

// Provider is what llmguard knows about one provider type: its wire
// dialect, the environment variables its official SDKs read, its documented
// base URL and the default model. Values are copies; mutating one does not
// change the table. The zero value is no provider.
type Provider struct {
	// Name is the provider type, also its default name in a configuration
	// ("anthropic", "deepseek", "openai-compatible", "sim").
	Name string
	// Dialect is the adapter family: DialectAnthropic, DialectOpenAI,
	// DialectAzure, DialectGemini or DialectSim.
	Dialect string
	// KeyEnv lists the variables holding the API key, first non-empty wins
	// (GEMINI_API_KEY before GOOGLE_API_KEY). Empty for providers without one.
	KeyEnv []string
	// BaseURLEnv overrides the base URL (for azure: the resource endpoint).
	BaseURLEnv string
	// ModelEnv overrides the default model (for azure: the deployment name).
	ModelEnv string
	// APIVersionEnv overrides APIVersion (azure only).
	APIVersionEnv string
	// BaseURL is the documented base URL. For the OpenAI family it includes
	// "/v1" (or the provider's equivalent path) as the SDKs do, and adapters
	// append "/chat/completions". For anthropic the adapter appends
	// "/v1/messages"; for gemini "/v1beta/models/{model}:generateContent".
	// Empty when there is no public default (azure, openai-compatible, sim).
	BaseURL string
	// Model is the default model ("" for azure, where it is the deployment
	// and must be configured).
	Model string
	// APIVersion is the default api-version query parameter (azure only).
	APIVersion string
	// KeyPrefix is the usual prefix of a valid key ("sk-ant-"), "" when keys
	// have no recognisable shape. Used by doctor to spot swapped keys.
	KeyPrefix string
	// KeyOptional: the provider works without a key (local servers, sim).
	KeyOptional bool
	// Responses: the provider serves OpenAI's Responses API itself, so
	// Responses API requests are relayed to it unchanged rather than
	// translated (openai only, whatever the configured name or base URL).
	Responses bool
}

// providerTable is the table of known providers, in a stable documentation
// order. Never mutated.
var providerTable = []Provider{
	{Name: "anthropic", Dialect: DialectAnthropic,
		KeyEnv: []string{"ANTHROPIC_API_KEY"}, BaseURLEnv: "ANTHROPIC_BASE_URL", ModelEnv: "ANTHROPIC_MODEL",
		BaseURL: "https://api.anthropic.com", Model: "claude-sonnet-4-5", KeyPrefix: "sk-ant-"},
	{Name: "openai", Dialect: DialectOpenAI,
		KeyEnv: []string{"OPENAI_API_KEY"}, BaseURLEnv: "OPENAI_BASE_URL", ModelEnv: "OPENAI_MODEL",
		BaseURL: "https://api.openai.com/v1", Model: "gpt-4.1", KeyPrefix: "sk-", Responses: true},
	{Name: "azure", Dialect: DialectAzure,
		KeyEnv: []string{"AZURE_OPENAI_API_KEY"}, BaseURLEnv: "AZURE_OPENAI_ENDPOINT", ModelEnv: "AZURE_OPENAI_DEPLOYMENT",
		APIVersionEnv: "AZURE_OPENAI_API_VERSION", APIVersion: "2024-10-21"},
	{Name: "gemini", Dialect: DialectGemini,
		KeyEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, BaseURLEnv: "GEMINI_BASE_URL", ModelEnv: "GEMINI_MODEL",
		BaseURL: "https://generativelanguage.googleapis.com", Model: "gemini-2.5-flash", KeyPrefix: "AIza"},
	{Name: "deepseek", Dialect: DialectOpenAI,
		KeyEnv: []string{"DEEPSEEK_API_KEY"}, BaseURLEnv: "DEEPSEEK_BASE_URL", ModelEnv: "DEEPSEEK_MODEL",
		BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat", KeyPrefix: "sk-"},
	{Name: "mistral", Dialect: DialectOpenAI,
		KeyEnv: []string{"MISTRAL_API_KEY"}, BaseURLEnv: "MISTRAL_BASE_URL", ModelEnv: "MISTRAL_MODEL",
		BaseURL: "https://api.mistral.ai/v1", Model: "mistral-large-latest"},
	{Name: "groq", Dialect: DialectOpenAI,
		KeyEnv: []string{"GROQ_API_KEY"}, BaseURLEnv: "GROQ_BASE_URL", ModelEnv: "GROQ_MODEL",
		BaseURL: "https://api.groq.com/openai/v1", Model: "llama-3.3-70b-versatile", KeyPrefix: "gsk_"},
	{Name: "openrouter", Dialect: DialectOpenAI,
		KeyEnv: []string{"OPENROUTER_API_KEY"}, BaseURLEnv: "OPENROUTER_BASE_URL", ModelEnv: "OPENROUTER_MODEL",
		BaseURL: "https://openrouter.ai/api/v1", Model: "openai/gpt-4.1-mini", KeyPrefix: "sk-or-"},
	{Name: "xai", Dialect: DialectOpenAI,
		KeyEnv: []string{"XAI_API_KEY"}, BaseURLEnv: "XAI_BASE_URL", ModelEnv: "XAI_MODEL",
		BaseURL: "https://api.x.ai/v1", Model: "grok-3-mini", KeyPrefix: "xai-"},
	{Name: "together", Dialect: DialectOpenAI,
		KeyEnv: []string{"TOGETHER_API_KEY"}, BaseURLEnv: "TOGETHER_BASE_URL", ModelEnv: "TOGETHER_MODEL",
		BaseURL: "https://api.together.xyz/v1", Model: "meta-llama/Llama-3.3-70B-Instruct-Turbo"},
	{Name: "fireworks", Dialect: DialectOpenAI,
		KeyEnv: []string{"FIREWORKS_API_KEY"}, BaseURLEnv: "FIREWORKS_BASE_URL", ModelEnv: "FIREWORKS_MODEL",
		BaseURL: "https://api.fireworks.ai/inference/v1", Model: "accounts/fireworks/models/llama-v3p3-70b-instruct", KeyPrefix: "fw_"},
	{Name: "openai-compatible", Dialect: DialectOpenAI, KeyOptional: true},
	{Name: "sim", Dialect: DialectSim, Model: "sim-1", KeyOptional: true},
}

// KnownProvider returns the table entry for a provider type name
// (case-insensitive, surrounding spaces ignored).
func KnownProvider(name string) (Provider, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, p := range providerTable {
		if p.Name == name {
			p.KeyEnv = slices.Clone(p.KeyEnv)
			return p, true
		}
	}
	return Provider{}, false
}

// KnownProviders returns every known provider type in documentation order
// (hosted providers first, then openai-compatible and sim). The slice is a
// fresh copy.
func KnownProviders() []Provider {
	out := make([]Provider, len(providerTable))
	for i, p := range providerTable {
		p.KeyEnv = slices.Clone(p.KeyEnv)
		out[i] = p
	}
	return out
}

// KnownProviderNames returns the known provider type names, in table order.
func KnownProviderNames() []string {
	out := make([]string, len(providerTable))
	for i, p := range providerTable {
		out[i] = p.Name
	}
	return out
}

// EnvKey returns the provider's API key from getenv (first non-empty of
// KeyEnv, trimmed) and the variable it came from; "", "" when none is set
// or getenv is nil.
func (p Provider) EnvKey(getenv func(string) string) (key, variable string) {
	if getenv == nil {
		return "", ""
	}
	for _, v := range p.KeyEnv {
		if k := strings.TrimSpace(getenv(v)); k != "" {
			return k, v
		}
	}
	return "", ""
}
