package resilience_test

import (
	"strings"
	"testing"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
)

// mockStack is an engine over a mock of the given config (a scenario, a
// rate limit), for the scenario tests of issue 13: the mock and the
// adapters speak HTTP over an in-memory network, so a synctest bubble's
// clock runs through them. cfg gives the routes (and models, pricing); its
// providers are set to anthropic, openai and gemini on the mock.
func mockStack(t *testing.T, mc *mock.Config, cfg *config.Config, mutate func(*resilience.Options)) (*mock.Server, *resilience.Engine) {
	t.Helper()
	srv, adapters := mockAdapters(t, mc, cfg)
	opts := cfg.EngineOptions()
	opts.Adapters = adapters
	if mutate != nil {
		mutate(opts)
	}
	eng, err := resilience.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv, eng
}

// mockAdapters starts a mock of mc and returns it with adapters for it,
// setting cfg's providers (see mockStack).
func mockAdapters(t *testing.T, mc *mock.Config, cfg *config.Config) (*mock.Server, map[string]provider.Adapter) {
	t.Helper()
	srv := mock.New(mc)
	ts := pipenet.NewServer(srv)
	t.Cleanup(func() { srv.Close(); ts.Close() })
	cfg.Providers = map[string]*config.Provider{
		"anthropic": {APIKey: "sk-ant-mock", BaseURL: ts.URL},
		"openai":    {APIKey: "sk-mock", BaseURL: ts.URL + "/v1"},
		"gemini":    {APIKey: "AIzaMock", BaseURL: ts.URL},
	}
	adapters := map[string]provider.Adapter{}
	for name, p := range cfg.Providers {
		a, err := registry.New(name, p.Settings(), ts.Client())
		if err != nil {
			t.Fatal(err)
		}
		adapters[name] = a
	}
	return srv, adapters
}

// routes is a config of the one route "default".
func routes(r *config.Route) *config.Config {
	return &config.Config{Routes: map[string]*config.Route{"default": r}}
}

// served counts the mock's requests for model that it answered with status.
func served(srv *mock.Server, model string, status int) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Model == model && r.Status == status {
			n++
		}
	}
	return n
}

// modelOf is a target's model, without its provider or a fault marker.
func modelOf(target string) string {
	_, m, _ := strings.Cut(target, "/")
	m, _, _ = strings.Cut(m, "+")
	return m
}
