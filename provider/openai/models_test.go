package openai_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/openai"
)

func TestModels(t *testing.T) {
	providertest.Models{
		New: func(base, key string) provider.ModelLister {
			return openai.New(&openai.Config{BaseURL: base, APIKey: key})
		},
		BaseSuffix: "/v1",
		Want:       []string{"gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini"},
		Path:       "/v1/models",
		KeyHeader:  "Authorization",
	}.Run(t)
}

// Azure lists models at {endpoint}/openai/models?api-version=... with the
// api-key header.
func TestModelsAzure(t *testing.T) {
	up := providertest.NewUpstream(t, providertest.Reply(200, `{"data":[{"id":"gpt-4o"},{"id":"gpt-4.1"}],"object":"list"}`, "Content-Type", "application/json"))
	a := openai.New(&openai.Config{Name: "azure", BaseURL: up.URL, APIKey: "azure-key-0123456789abcdef", APIVersion: "2024-10-21"})
	got, err := a.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"gpt-4o", "gpt-4.1"}, got); diff != "" {
		t.Errorf("Models() (-want +got):\n%s", diff)
	}
	last := up.Last()
	if last.Method != "GET" || last.Path != "/openai/models" || last.RawQuery != "api-version=2024-10-21" {
		t.Errorf("request = %s %s?%s", last.Method, last.Path, last.RawQuery)
	}
	if last.Header.Get("Api-Key") != "azure-key-0123456789abcdef" || last.Header.Get("Authorization") != "" {
		t.Errorf("auth headers = %v", last.Header)
	}
}
