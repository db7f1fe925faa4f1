// Command library calls an LLM through llmguard's engine, as a Go program
// would: configuration from the environment (or llmguard.yaml), one adapter
// per provider, the engine over them.
//
// With a provider key in the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY,
// ...) it calls that provider. With none, it starts llmguard's fault-injecting
// mock in-process and points Anthropic at it, in the overload-burst scenario:
// the first three calls get 529 overloaded, so the answer shows the engine
// retrying.
//
//	go run ./examples/library
package main

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	getenv := os.Getenv
	if !providerKeySet() {
		getenv = withMock()
	}

	cfg, err := config.LoadDefault(getenv) // or config.Load("llmguard.yaml", getenv)
	if err != nil {
		log.Fatal(err) // one line per problem: file:line:col: field: what to fix
	}
	adapters, err := registry.Build(cfg.ProviderSettings(), provider.NewHTTPClient(nil))
	if err != nil {
		log.Fatal(err)
	}
	opts := cfg.EngineOptions() // routes, default provider, model catalogue
	opts.Adapters = adapters
	eng, err := resilience.New(opts)
	if err != nil {
		log.Fatal(err)
	}
	res, err := eng.Chat(ctx, &resilience.Call{Route: "default", Request: &provider.Request{
		Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "Say hello to llmguard"}}}},
	}})
	if err != nil {
		log.Fatal(err) // one line: each target tried and its verdict, then the last request id
	}
	fmt.Printf("%s answered after %d attempts: %s\n", res.Target, res.Attempts, res.Response.Text)
}

// providerKeySet reports whether any known provider's key variable is set.
func providerKeySet() bool {
	for _, p := range catalog.KnownProviders() {
		for _, v := range p.KeyEnv {
			if os.Getenv(v) != "" {
				return true
			}
		}
	}
	return false
}

// withMock serves the mock in the overload-burst scenario and returns an
// environment whose Anthropic provider is the mock.
func withMock() func(string) string {
	sc, _ := mock.Builtin("overload-burst")
	srv := httptest.NewServer(mock.New(&mock.Config{Scenario: sc}))
	fmt.Println("no provider key set: calling llmguard's in-process mock (overload-burst: three 529s, then answers)")
	vars := map[string]string{"ANTHROPIC_API_KEY": "mock-key", "ANTHROPIC_BASE_URL": srv.URL}
	return func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
}
