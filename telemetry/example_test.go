package telemetry_test

import (
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/telemetry"
)

// Metrics take the engine's events as its OnEvent hook, and serve them.
func Example() {
	m := telemetry.New(&telemetry.Options{Routes: map[string][]string{"default": {"openai/gpt-4o"}}})
	m.Event(resilience.Event{Kind: resilience.EventFailure, Route: "default", Target: "openai/gpt-4o",
		Verdict: &classify.Verdict{Class: classify.RateLimited}})

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		if strings.HasPrefix(line, "llmguard_attempts_total{") {
			fmt.Print(line)
		}
	}
	// Output:
	// llmguard_attempts_total{error_type="rate_limited",fault_domain="provider",target="openai/gpt-4o"} 1
}
