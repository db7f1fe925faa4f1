package resilience_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
)

// A route over two providers: the first is overloaded once, so the engine
// retries it after a jittered backoff and it answers.
func Example() {
	srv := mock.New(nil) // the fault-injecting upstream, in-process
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()

	cfg := &config.Config{
		Providers: map[string]*config.Provider{
			"anthropic": {APIKey: "sk-ant-example", BaseURL: ts.URL},
			"openai":    {APIKey: "sk-example", BaseURL: ts.URL + "/v1"},
		},
		Routes: map[string]*config.Route{"default": {
			Targets: []config.Target{{Target: "anthropic/claude-sonnet-4-5+fault=529,200"}, {Target: "openai/gpt-4.1"}},
			Retry:   config.Retry{BaseDelay: time.Millisecond},
		}},
	}
	adapters, err := registry.Build(cfg.ProviderSettings(), ts.Client())
	if err != nil {
		fmt.Println(err)
		return
	}
	eng, err := resilience.New(resilience.Options{
		Config:   cfg,
		Adapters: adapters,
		OnEvent: func(e resilience.Event) {
			if e.Kind == resilience.EventFailure {
				fmt.Println("failure:", e.Target, e.Verdict.Class)
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := eng.Chat(context.Background(), &resilience.Call{
		Route: "default",
		Request: &provider.Request{MaxTokens: 100, Messages: []provider.Message{{
			Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "Name a prime"}}}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Target, "after", res.Attempts, "attempts:", res.Response.Text)
	// Output:
	// failure: anthropic/claude-sonnet-4-5+fault=529,200 overloaded
	// anthropic/claude-sonnet-4-5+fault=529,200 after 2 attempts: Mock answer from claude-sonnet-4-5: Name a prime
}

// A failed call is a *RouteError: one line naming each target and its
// verdict, the sentinel for errors.Is, and when to come back.
func ExampleRouteError() {
	srv := mock.New(nil)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()
	cfg := &config.Config{
		Providers: map[string]*config.Provider{"openai": {APIKey: "sk-example", BaseURL: ts.URL + "/v1"}},
		Routes: map[string]*config.Route{"default": {
			Targets: []config.Target{{Target: "openai/gpt-4.1+fault=rate_limit:90"}},
		}},
	}
	adapters, _ := registry.Build(cfg.ProviderSettings(), ts.Client())
	eng, _ := resilience.New(resilience.Options{Config: cfg, Adapters: adapters})
	_, err := eng.Chat(context.Background(), &resilience.Call{Request: &provider.Request{
		Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hi"}}}}}})
	var re *resilience.RouteError
	if errors.As(err, &re) {
		fmt.Println(errors.Is(err, resilience.ErrExhausted), re.AllRateLimited(), time.Until(re.RetryAt) > 80*time.Second)
		fmt.Println(re.Last().Verdict.Class, re.Last().Verdict.Wait)
	}
	// Output:
	// true true true
	// rate_limited 1m30s
}
