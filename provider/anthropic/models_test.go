package anthropic_test

import (
	"testing"

	"github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/anthropic"
)

func TestModels(t *testing.T) {
	providertest.Models{
		New: func(base, key string) provider.ModelLister {
			return anthropic.New(&anthropic.Config{BaseURL: base, APIKey: key})
		},
		Want:      []string{"claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"},
		Path:      "/v1/models",
		KeyHeader: "X-Api-Key",
	}.Run(t)
}
