package registry_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/registry"
)

// Build builds one adapter per configured provider, all sharing one HTTP
// client; a provider without its key is a one-line error naming the
// variable to set.
func ExampleBuild() {
	// A stand-in for the Gemini API.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Bonjour"}]},"finishReason":"STOP"}],
			"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":1},"modelVersion":"gemini-2.5-flash"}`)
	}))
	defer srv.Close()

	adapters, err := registry.Build(map[string]*registry.Settings{
		"gemini": {APIKey: "AIza-example", BaseURL: srv.URL},
	}, provider.NewHTTPClient(nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := adapters["gemini"].Chat(context.Background(), &provider.Request{
		Messages: []provider.Message{{Role: provider.RoleUser,
			Content: []provider.Part{{Type: provider.PartText, Text: "Say hello in French"}}}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Provider, resp.Model, resp.Text)

	_, err = registry.New("deepseek", &registry.Settings{}, nil)
	fmt.Println(err)
	// Output:
	// gemini gemini-2.5-flash Bonjour
	// providers.deepseek.api_key is empty: set DEEPSEEK_API_KEY (MCP clients don't load your shell profile: put it in the client's env block)
}
