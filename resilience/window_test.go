package resilience_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/resilience"
)

// TestContextOverflowUnknownWindow is issue 13's scenario 3: a prompt too
// long for the primary (the mock's context_length_exceeded) falls back to a
// target whose window the catalogue does not know (a local model behind an
// OpenAI-compatible server) and gets its answer, after the targets known to
// be larger; a target known to be no larger is skipped. Before, the unknown
// window was skipped and the caller got 503.
func TestContextOverflowUnknownWindow(t *testing.T) {
	const (
		primary = "openai/gpt-4o+fault=context_overflow" // 128k in the catalogue
		small   = "anthropic/claude-3-5-haiku"           // 200k: larger
		local   = "openai/llama-local"                   // unknown window
		smaller = "openai/gpt-4o-mini"                   // 128k: not larger
	)
	for _, tc := range []struct {
		name    string
		targets []string
		want    string
		tried   []string // fallbacks the mock saw, in order
	}{
		{"unknown window is tried", []string{primary, local}, local, []string{"llama-local"}},
		{"known-larger first", []string{primary, local, small + "+fault=529"}, local,
			[]string{"claude-3-5-haiku", "llama-local"}},
		{"known not larger is skipped", []string{primary, smaller, local}, local, []string{"llama-local"}},
		{"the overflow still rules after another failure", []string{primary, small + "+fault=529", smaller, local}, local,
			[]string{"claude-3-5-haiku", "llama-local"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				route := routeOf(tc.targets...)
				route.Retry.MaxAttempts = 1
				cfg := routes(route)
				// The fault markers hide the models from the catalogue.
				cfg.Models = map[string]config.ModelInfo{primary: {ContextWindow: 128000}, small + "+fault=529": {ContextWindow: 200000}}
				srv, eng := mockStack(t, nil, cfg, nil)
				res, err := eng.Chat(context.Background(), &resilience.Call{Request: ask("a very long prompt")})
				if err != nil {
					t.Fatalf("caller got %v, want the answer of %s", err, tc.want)
				}
				if res.Target != tc.want {
					t.Errorf("answered by %s, want %s", res.Target, tc.want)
				}
				var tried []string
				for _, r := range srv.Requests() {
					if r.Model != "gpt-4o" {
						tried = append(tried, r.Model)
					}
				}
				if strings.Join(tried, ",") != strings.Join(tc.tried, ",") {
					t.Errorf("fallbacks tried %v, want %v", tried, tc.tried)
				}
			})
		})
	}
}
