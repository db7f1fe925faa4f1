package resilience_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/anthropic"
	"github.com/llmguard/llmguard/provider/openai"
	"github.com/llmguard/llmguard/resilience"
)

// An engine built from Go structs alone: a route over two providers (here
// llmguard's fault-injecting mock, in-process), each policy at its default
// but the backoff. The first target is overloaded once, so the engine
// retries it after a jittered backoff and it answers.
func Example() {
	srv := mock.New(nil) // the fault-injecting upstream, in-process
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()

	eng, err := resilience.New(&resilience.Options{
		Routes: map[string]resilience.Route{"default": {
			Targets: []resilience.Target{
				{Name: "anthropic/claude-sonnet-4-5+fault=529,200"},
				{Name: "openai/gpt-4.1", Retry: &resilience.Retry{MaxAttempts: 2}},
			},
			Retry:   resilience.Retry{BaseDelay: time.Millisecond, Budget: new(1.0)},
			Breaker: resilience.Breaker{FailureRatio: new(0.0)}, // never opens on ill health
		}},
		Adapters: map[string]provider.Adapter{
			"anthropic": anthropic.New(&anthropic.Config{APIKey: "sk-ant-example", BaseURL: ts.URL, Client: ts.Client()}),
			"openai":    openai.New(&openai.Config{APIKey: "sk-example", BaseURL: ts.URL + "/v1", Client: ts.Client()}),
		},
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
	eng, _ := resilience.New(&resilience.Options{
		Routes:   map[string]resilience.Route{"default": {Targets: []resilience.Target{{Name: "openai/gpt-4.1+fault=rate_limit:90"}}}},
		Adapters: map[string]provider.Adapter{"openai": openai.New(&openai.Config{APIKey: "sk-example", BaseURL: ts.URL + "/v1", Client: ts.Client()})},
	})
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
