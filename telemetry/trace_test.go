package telemetry

import (
	"context"
	"testing"

	"github.com/llmguard/llmguard/resilience"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestSpanWaitsAndHedges: a pacing wait is an event on the request's span
// and counts in the next attempt's waited_seconds; a won hedge is an
// event naming both targets.
func TestSpanWaitsAndHedges(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := NewTracer(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	_, sp := tr.Start(context.Background(), "POST /v1/messages", nil)
	const a, b = "anthropic/claude-sonnet-4-5", "openai/gpt-4o"
	for _, ev := range []resilience.Event{
		{Kind: resilience.EventPace, Target: a, Wait: 1500e6},
		{Kind: resilience.EventAttempt, Target: a, Attempt: 1},
		{Kind: resilience.EventFallback, From: a, Target: b, Reason: "hedge: no answer within 2s"},
		{Kind: resilience.EventAttempt, Target: b, Attempt: 1},
		{Kind: resilience.EventSuccess, Target: b, Attempt: 1},
		{Kind: resilience.EventHedgeWon, From: a, Target: b},
	} {
		sp.Event(ev)
	}
	sp.End(&Request{Route: "default", Target: b, Outcome: OutcomeSuccess}, 200)
	var waited float64
	events := map[string]bool{}
	for _, s := range exp.GetSpans() {
		for _, kv := range s.Attributes {
			if s.Name == "chat claude-sonnet-4-5" && kv.Key == attrWaited {
				waited = kv.Value.AsFloat64()
			}
		}
		for _, e := range s.Events {
			events[e.Name] = true
		}
	}
	if waited != 1.5 {
		t.Errorf("the attempt after the pacing wait has waited_seconds %v, want 1.5", waited)
	}
	for _, name := range []string{"pacing", "fallback", "hedge_won"} {
		if !events[name] {
			t.Errorf("no %q event on the request's span (events: %v)", name, events)
		}
	}
}
