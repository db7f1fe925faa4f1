package gemini_test

import (
	"testing"

	"github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/gemini"
)

func TestModels(t *testing.T) {
	providertest.Models{
		New: func(base, key string) provider.ModelLister {
			return gemini.New(&gemini.Config{BaseURL: base, APIKey: key})
		},
		Want:      []string{"gemini-2.5-flash", "gemini-2.5-pro"},
		Path:      "/v1beta/models",
		KeyHeader: "X-Goog-Api-Key",
	}.Run(t)
}
