package telemetry

import (
	"testing"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/resilience"
)

// BenchmarkCall is what one call that failed once, retried and succeeded
// costs in metrics: four engine events and the request record.
func BenchmarkCall(b *testing.B) {
	const t = "openai/gpt-4o"
	m := New(&Options{Routes: map[string][]string{"default": {t}}})
	v := &classify.Verdict{Class: classify.Overloaded}
	evs := []resilience.Event{
		{Kind: resilience.EventAttempt, Route: "default", Target: t, Attempt: 1},
		{Kind: resilience.EventFailure, Route: "default", Target: t, Attempt: 1, Verdict: v},
		{Kind: resilience.EventRetry, Route: "default", Target: t, Attempt: 2, Verdict: v, Wait: time.Second},
		{Kind: resilience.EventSuccess, Route: "default", Target: t, Attempt: 2},
	}
	r := &Request{Dialect: "openai", Route: "default", Target: t, Duration: time.Second, Usage: usage(100, 20), Model: "gpt-4o"}
	b.ReportAllocs()
	for b.Loop() {
		for _, ev := range evs {
			m.Event(ev)
		}
		m.Request(r)
	}
}
