package chaos

import (
	"fmt"
	"io"
	"strings"
)

// Markdown writes the scorecard as Markdown: the table, the findings, and
// what the scenarios, strategies and columns are.
func (s *Scorecard) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Seed %d · %d requests per cell, arriving evenly over %gs · %s · the whole run took %.0fs.\n",
		s.Seed, s.Requests, s.WindowSeconds, s.Machine, s.ElapsedSeconds)
	fmt.Fprintf(&b, "Route: %s, then %s, which is healthy in every scenario. Every strategy streams with the same deadline (%v), header timeout (%v) and attempts per target (%d).\n\n",
		Primary, Fallback, Deadline, HeaderTimeout, Attempts)
	b.WriteString(s.Table())
	b.WriteString("\n")
	b.WriteString(s.FindingsMarkdown())
	b.WriteString("\nScenarios (what the primary does):\n\n")
	for _, sc := range s.Scenarios {
		fmt.Fprintf(&b, "- **%s**: %s.\n", sc.Name, sc.Primary)
	}
	b.WriteString("\nStrategies:\n\n")
	for _, st := range s.Strategies {
		fmt.Fprintf(&b, "- **%s**: %s.\n", st.Name, st.Description)
	}
	b.WriteString("\n" + legend)
	_, err := io.WriteString(w, b.String())
	return err
}

const legend = `Columns: *success* is the share of full answers; *full / errors / truncated* count full answers, clean
errors (nothing reached the caller) and answers cut short or garbled; *attempts/req* are the generation
requests the mocks logged, per request; *hopeless* counts attempts answered with an error that could never
succeed (bad key, no credit, spent quota) that the client sent after that target had already answered it with
one; *wait/req*
is the mean time per request with no attempt on the wire (backoff, holds, queues); *p50* and *p99* are the
times to a full answer, a request without one counting as never; *cost* and *wasted* are dollars per 1,000
requests at list prices for every attempt answered 2xx (prompt and streamed tokens), wasted for those that
did not end properly (broken, cancelled, a hedge's loser).
`

// Table is the scorecard's Markdown table, a row per scenario and strategy.
func (s *Scorecard) Table() string {
	var b strings.Builder
	b.WriteString("| scenario | strategy | success | full / errors / truncated | attempts/req | hopeless | wait/req | p50 | p99 | cost /1k | wasted /1k |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range s.Cells {
		name, strat := c.Scenario, c.Strategy
		if c.Strategy == "llmguard" {
			strat = "**llmguard**"
		} else {
			name = ""
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f%% | %d / %d / %d | %.2f | %d | %s | %s | %s | $%.4f | $%.4f |\n",
			name, strat, 100*c.Success, c.Full, c.Errors, c.Truncated, c.AttemptsPerRequest, c.Hopeless,
			seconds(c.WaitSeconds), seconds(c.P50), seconds(c.P99), perThousand(&c, c.CostUSD), perThousand(&c, c.WastedUSD))
	}
	return b.String()
}

// FindingsMarkdown lists the findings: targets missed, columns where
// llmguard does worse for nothing, and those it trades for more answers.
func (s *Scorecard) FindingsMarkdown() string {
	var b strings.Builder
	var worse, trades []Finding
	for _, f := range s.Findings {
		if f.Trade {
			trades = append(trades, f)
		} else {
			worse = append(worse, f)
		}
	}
	fmt.Fprintf(&b, "Targets: %.1f%% full answers and %d hopeless attempts in every scenario (each has a healthy fallback); llmguard at least as good as every baseline in every column.\n\n",
		100*TargetSuccess, TargetHopeless)
	if len(worse) == 0 {
		b.WriteString("Findings: none; llmguard meets both targets and no baseline beats it in any column without answering fewer requests.\n")
	} else {
		b.WriteString("Findings (llmguard misses a target, or a baseline does better at no loss of answers):\n\n")
		for _, f := range worse {
			fmt.Fprintf(&b, "- %s: %s\n", f.Scenario, f.Text)
		}
	}
	if len(trades) > 0 {
		b.WriteString("\nTrades (llmguard spends more in a column to answer more requests, or faster, than the baseline):\n\n")
		for _, f := range trades {
			fmt.Fprintf(&b, "- %s: %s\n", f.Scenario, f.Text)
		}
	}
	return b.String()
}
