package alert

import (
	"log/slog"
	"testing"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/resilience"
)

// Event runs inside every engine call; the events that alert nothing must
// cost next to nothing.
func BenchmarkEvent(b *testing.B) {
	tests := []struct {
		name string
		ev   resilience.Event
	}{
		{"attempt", resilience.Event{Kind: resilience.EventAttempt, Target: "openai/gpt-4.1"}},
		{"success", resilience.Event{Kind: resilience.EventSuccess, Target: "openai/gpt-4.1"}},
		{"failure-model", resilience.Event{Kind: resilience.EventFailure, Target: "openai/gpt-4.1",
			Verdict: &classify.Verdict{Class: classify.Overloaded, Scope: classify.ScopeModel, Message: "503 overloaded"}}},
		{"failure-key-repeat", resilience.Event{Kind: resilience.EventFailure, Target: "openai/gpt-4.1",
			Verdict: &classify.Verdict{Class: classify.Auth, Scope: classify.ScopeKey, Message: "401 invalid_api_key"}}},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			n, err := New(&Options{WebhookURL: "http://" + pipenet.Refused(b) + "/hook", Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer n.cancel()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					n.Event(tt.ev)
				}
			})
		})
	}
}
