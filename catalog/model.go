package catalog

import (
	"strings"
)

// Price is dollars per million tokens; the zero value is free.
type Price struct {
	In  float64 // per million input tokens
	Out float64 // per million output tokens
}

// Blended is the price of a typical call mix, three input tokens for each
// output token, in $/MTok: the sort key of SortByCost.
func (p Price) Blended() float64 { return (3*p.In + p.Out) / 4 }

// Cost is the dollar cost of a call with the given token counts.
func (p Price) Cost(inTokens, outTokens int) float64 {
	return (float64(inTokens)*p.In + float64(outTokens)*p.Out) / 1e6
}

// Model is what is known of a model. The zero value is an unknown model:
// unknown context window, no assistant prefill, not an embedding model.
type Model struct {
	// ContextWindow in tokens (0 = unknown).
	ContextWindow int
	// Prefill: the API continues a final assistant turn.
	Prefill bool
	// Dimensions is an embedding model's vector size (0 = unknown, or not
	// an embedding model). Embeddings fall back only between targets that
	// give vectors of the same size.
	Dimensions int
	// MinDimensions is the smallest size the API shortens its vectors to on
	// request (OpenAI's dimensions, Gemini's outputDimensionality), any size
	// from it up to Dimensions (0 = it does not shorten them).
	MinDimensions int
}

// Entry is one model of the built-in table: its list price and what is
// known of it.
type Entry struct {
	Price
	Model
}

// builtin is the built-in model table, by provider type (a name of
// KnownProviders) then model. Prices are list prices in US dollars per
// million tokens (input, output), standard tier, no batch or cache
// discounts, as published by each provider in 2025-2026; they change, so
// check the provider's pricing page when cost matters. Prefill is true when
// the API accepts a final assistant turn that the model continues
// (Anthropic does; OpenAI chat does not); Dimensions is an embedding
// model's vector size and MinDimensions the smallest size it shortens its
// vectors to on request. A model name with a version suffix
// ("claude-sonnet-4-5-20250929", "gpt-4.1-2025-04-14", "-latest") matches
// its base entry. Never mutated.
var builtin = map[string]map[string]Entry{
	// Anthropic (https://www.anthropic.com/pricing)
	"anthropic": {
		"claude-opus-4-5":   {Price{5, 25}, Model{ContextWindow: 200000, Prefill: true}},
		"claude-opus-4-1":   {Price{15, 75}, Model{ContextWindow: 200000, Prefill: true}},
		"claude-opus-4-0":   {Price{15, 75}, Model{ContextWindow: 200000, Prefill: true}},
		"claude-opus-4":     {Price{15, 75}, Model{ContextWindow: 200000, Prefill: true}},
		"claude-sonnet-4-5": {Price{3, 15}, Model{ContextWindow: 200000, Prefill: true}},
		"claude-sonnet-4-0": {Price{3, 15}, Model{ContextWindow: 200000, Prefill: true}},
		"claude-sonnet-4":   {Price{3, 15}, Model{ContextWindow: 200000, Prefill: true}},
		"claude-3-7-sonnet": {Price{3, 15}, Model{ContextWindow: 200000, Prefill: true}},
		"claude-haiku-4-5":  {Price{1, 5}, Model{ContextWindow: 200000, Prefill: true}},
		"claude-3-5-haiku":  {Price{0.8, 4}, Model{ContextWindow: 200000, Prefill: true}},
	},
	// OpenAI (https://openai.com/api/pricing)
	"openai": {
		"gpt-5":                  {Price{1.25, 10}, Model{ContextWindow: 400000}},
		"gpt-5-mini":             {Price{0.25, 2}, Model{ContextWindow: 400000}},
		"gpt-5-nano":             {Price{0.05, 0.4}, Model{ContextWindow: 400000}},
		"gpt-4.1":                {Price{2, 8}, Model{ContextWindow: 1047576}},
		"gpt-4.1-mini":           {Price{0.4, 1.6}, Model{ContextWindow: 1047576}},
		"gpt-4.1-nano":           {Price{0.1, 0.4}, Model{ContextWindow: 1047576}},
		"gpt-4o":                 {Price{2.5, 10}, Model{ContextWindow: 128000}},
		"gpt-4o-mini":            {Price{0.15, 0.6}, Model{ContextWindow: 128000}},
		"o3":                     {Price{2, 8}, Model{ContextWindow: 200000}},
		"o4-mini":                {Price{1.1, 4.4}, Model{ContextWindow: 200000}},
		"text-embedding-3-small": {Price{0.02, 0}, Model{ContextWindow: 8191, Dimensions: 1536, MinDimensions: 1}},
		"text-embedding-3-large": {Price{0.13, 0}, Model{ContextWindow: 8191, Dimensions: 3072, MinDimensions: 1}},
		"text-embedding-ada-002": {Price{0.1, 0}, Model{ContextWindow: 8191, Dimensions: 1536}},
	},
	// Google Gemini API (https://ai.google.dev/gemini-api/docs/pricing), prompts <= 200k tokens
	"gemini": {
		"gemini-2.5-pro":        {Price{1.25, 10}, Model{ContextWindow: 1048576}},
		"gemini-2.5-flash":      {Price{0.3, 2.5}, Model{ContextWindow: 1048576}},
		"gemini-2.5-flash-lite": {Price{0.1, 0.4}, Model{ContextWindow: 1048576}},
		"gemini-2.0-flash":      {Price{0.1, 0.4}, Model{ContextWindow: 1048576}},
		"gemini-embedding-001":  {Price{0.15, 0}, Model{ContextWindow: 2048, Dimensions: 3072, MinDimensions: 128}},
	},
	// DeepSeek (https://api-docs.deepseek.com/quick_start/pricing), cache-miss input
	"deepseek": {
		"deepseek-chat":     {Price{0.28, 0.42}, Model{ContextWindow: 131072}},
		"deepseek-reasoner": {Price{0.28, 0.42}, Model{ContextWindow: 131072}},
	},
	// Mistral (https://mistral.ai/pricing)
	"mistral": {
		"mistral-large":  {Price{2, 6}, Model{ContextWindow: 131072}},
		"mistral-medium": {Price{0.4, 2}, Model{ContextWindow: 131072}},
		"mistral-small":  {Price{0.1, 0.3}, Model{ContextWindow: 131072}},
		"codestral":      {Price{0.3, 0.9}, Model{ContextWindow: 256000}},
		"mistral-embed":  {Price{0.1, 0}, Model{ContextWindow: 8192, Dimensions: 1024}},
	},
	// Groq (https://groq.com/pricing)
	"groq": {
		"llama-3.3-70b-versatile": {Price{0.59, 0.79}, Model{ContextWindow: 131072}},
		"llama-3.1-8b-instant":    {Price{0.05, 0.08}, Model{ContextWindow: 131072}},
		"openai/gpt-oss-120b":     {Price{0.15, 0.75}, Model{ContextWindow: 131072}},
		"openai/gpt-oss-20b":      {Price{0.1, 0.5}, Model{ContextWindow: 131072}},
	},
	// OpenRouter (https://openrouter.ai/models): pass-through of the upstream's list price
	"openrouter": {
		"openai/gpt-4.1-mini":         {Price{0.4, 1.6}, Model{ContextWindow: 1047576}},
		"openai/gpt-4.1":              {Price{2, 8}, Model{ContextWindow: 1047576}},
		"anthropic/claude-sonnet-4.5": {Price{3, 15}, Model{ContextWindow: 200000}},
		"google/gemini-2.5-flash":     {Price{0.3, 2.5}, Model{ContextWindow: 1048576}},
		"deepseek/deepseek-chat":      {Price{0.28, 0.42}, Model{ContextWindow: 131072}},
	},
	// xAI (https://docs.x.ai/docs/models)
	"xai": {
		"grok-4":      {Price{3, 15}, Model{ContextWindow: 256000}},
		"grok-3":      {Price{3, 15}, Model{ContextWindow: 131072}},
		"grok-3-mini": {Price{0.3, 0.5}, Model{ContextWindow: 131072}},
	},
	// Together AI (https://www.together.ai/pricing)
	"together": {
		"meta-llama/Llama-3.3-70B-Instruct-Turbo": {Price{0.88, 0.88}, Model{ContextWindow: 131072}},
		"deepseek-ai/DeepSeek-V3":                 {Price{1.25, 1.25}, Model{ContextWindow: 131072}},
	},
	// Fireworks AI (https://fireworks.ai/pricing)
	"fireworks": {
		"accounts/fireworks/models/llama-v3p3-70b-instruct": {Price{0.9, 0.9}, Model{ContextWindow: 131072}},
		"accounts/fireworks/models/deepseek-v3":             {Price{0.9, 0.9}, Model{ContextWindow: 131072}},
	},
	// The embedded simulated provider (no key, no cost).
	"sim": {
		"sim-1": {Price{0, 0}, Model{ContextWindow: 200000, Prefill: true}},
	},
}

// Builtin returns a copy of the built-in model table keyed "provider/model"
// (provider is a provider type of KnownProviders).
func Builtin() map[string]Entry {
	out := map[string]Entry{}
	for prov, models := range builtin {
		for m, e := range models {
			out[prov+"/"+m] = e
		}
	}
	return out
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
