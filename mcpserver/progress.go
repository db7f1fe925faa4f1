package mcpserver

import (
	"fmt"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/resilience"
)

// progressMessage is the line an agent sees while the engine works, e.g.
// "anthropic/claude-x attempt 2/5: 529 overloaded_error; retrying in 3.2s" or
// "anthropic/claude-x failed (529 overloaded_error: Overloaded); falling
// back to openai/gpt-x". "" means no notification.
func progressMessage(ev resilience.Event) string {
	what := ""
	if v := ev.Verdict; v != nil {
		what = v.ProviderType
		if v.Status > 0 {
			what = fmt.Sprintf("%d %s", v.Status, v.ProviderType)
		}
		if what == "" {
			what = string(v.Class)
		}
	}
	switch ev.Kind {
	case resilience.EventRetry:
		max := "?"
		if ev.MaxAttempts > 0 {
			max = fmt.Sprint(ev.MaxAttempts)
		}
		return fmt.Sprintf("%s attempt %d/%s: %s; retrying in %s", ev.Target, ev.Attempt, max, what, ev.Wait.Round(100*time.Millisecond))
	case resilience.EventFallback:
		// Target is where the call goes; From the target that failed.
		from := ev.From
		if from == "" {
			from = "the previous target"
		}
		if v := ev.Verdict; v != nil {
			msg := v.Message
			if msg == "" {
				msg = what
			}
			return fmt.Sprintf("%s failed (%s); falling back to %s", from, classify.Line(msg), ev.Target)
		}
		if ev.Reason != "" {
			return fmt.Sprintf("%s: %s; also trying %s", from, ev.Reason, ev.Target)
		}
		return fmt.Sprintf("falling back from %s to %s", from, ev.Target)
	case resilience.EventSkip:
		return fmt.Sprintf("skipping %s: %s", ev.Target, ev.Reason)
	case resilience.EventPace:
		return fmt.Sprintf("%s: waiting %s for a turn under its announced rate limit", ev.Target, ev.Wait.Round(100*time.Millisecond))
	case resilience.EventHedgeWon:
		return fmt.Sprintf("%s answered before %s", ev.Target, ev.From)
	}
	return ""
}
