package openai_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/providertest"
	"github.com/llmguard/llmguard/provider/openai"
)

func TestModels(t *testing.T) {
	badKey, _ := mock.Builtin("bad-key")
	tests := []struct {
		name      string
		scenario  *mock.Scenario
		key       string
		want      []string
		wantClass classify.Class
	}{
		{name: "healthy", key: "test-key-0123456789abcd", want: []string{"gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini"}},
		{name: "bad key", scenario: badKey, key: "test-key-0123456789abcd", wantClass: classify.Auth},
		{name: "no key", key: "", wantClass: classify.Auth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mock.New(&mock.Config{Scenario: tt.scenario})
			srv := httptest.NewServer(m)
			defer srv.Close()
			base := srv.URL + "/v1"
			key := tt.key
			var a provider.ModelLister = openai.New(&openai.Config{BaseURL: base, APIKey: key})
			got, err := a.Models(context.Background())
			if tt.wantClass != "" {
				pe := provider.AsError(err)
				if pe == nil || pe.Verdict.Class != tt.wantClass {
					t.Fatalf("Models() err = %v, want a *provider.Error of class %s", err, tt.wantClass)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Models() (-want +got):\n%s", diff)
			}
			reqs := m.Requests()
			if len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].Path != "/v1/models" || reqs[0].Endpoint != "models" {
				t.Errorf("upstream saw %+v, want one GET /v1/models", reqs)
			}
			if !strings.HasSuffix(reqs[0].Key, "abcd") {
				t.Errorf("key seen by the upstream = %q, want the adapter's key", reqs[0].Key)
			}
		})
	}
}

// A 200 whose body is not a model list is a classified error, not an empty list.
func TestModelsNotAList(t *testing.T) {
	up := providertest.NewUpstream(t, providertest.Reply(200, `{"object":"something"}`, "Content-Type", "application/json"))
	base := up.URL
	if "openai" == "openai" {
		base += "/v1"
	}
	key := "k-0123456789abcdef"
	a := openai.New(&openai.Config{BaseURL: base, APIKey: key})
	got, err := a.Models(context.Background())
	if provider.AsError(err) == nil {
		t.Fatalf("Models() = %v, %v; want a *provider.Error", got, err)
	}
	if h := up.Last().Header.Get("Authorization"); !strings.Contains(h, key) {
		t.Errorf("Authorization header = %q, want the key", h)
	}
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
