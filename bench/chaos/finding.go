package chaos

import (
	"fmt"

	"github.com/llmguard/llmguard/demo"
)

// Targets the scorecard holds llmguard to in every scenario (each has a
// healthy fallback).
const (
	TargetSuccess  = 0.999
	TargetHopeless = 0
)

// Finding is a cell where llmguard misses a target or does worse than a
// baseline in one column.
type Finding struct {
	Scenario string `json:"scenario"`
	// Column is the scorecard column ("success", "p99", …).
	Column string `json:"column"`
	// Baseline is the strategy llmguard does worse than ("" for a target
	// missed).
	Baseline string `json:"baseline,omitempty"`
	// Trade: llmguard pays this column for more full answers or faster
	// ones than the baseline's (a retry costs an attempt, a fallback its
	// price, a hedge a second prompt); otherwise it does worse for nothing.
	Trade bool `json:"trade"`
	// Text says it in one line.
	Text string `json:"text"`
}

// why lists a cell's failures, commonest first: " (timeout 40, deadline 2)".
func why(failures map[string]int) string {
	if len(failures) == 0 {
		return ""
	}
	return " (" + demo.Counts(failures) + ")"
}

// column is a compared column: its value in a cell, and whether more is
// better.
type column struct {
	name   string
	value  func(c *Cell) float64
	higher bool
	format func(float64) string
}

// never is how -1 ("never") compares: worse than any time.
func never(v float64) float64 {
	if v < 0 {
		return 1e9
	}
	return v
}

func seconds(v float64) string {
	if v < 0 || v >= 1e9 {
		return "never"
	}
	return fmt.Sprintf("%.3fs", v)
}

func per1k(v float64) string { return fmt.Sprintf("$%.4f/1k", v) }

var columns = []column{
	{"success", func(c *Cell) float64 { return c.Success }, true, func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }},
	{"truncated", func(c *Cell) float64 { return float64(c.Truncated) }, false, func(v float64) string { return fmt.Sprintf("%.0f", v) }},
	{"attempts/request", func(c *Cell) float64 { return c.AttemptsPerRequest }, false, func(v float64) string { return fmt.Sprintf("%.2f", v) }},
	{"hopeless attempts", func(c *Cell) float64 { return float64(c.Hopeless) }, false, func(v float64) string { return fmt.Sprintf("%.0f", v) }},
	{"wait/request", func(c *Cell) float64 { return c.WaitSeconds }, false, seconds},
	{"p50", func(c *Cell) float64 { return never(c.P50) }, false, seconds},
	{"p99", func(c *Cell) float64 { return never(c.P99) }, false, seconds},
	{"cost", func(c *Cell) float64 { return perThousand(c, c.CostUSD) }, false, per1k},
	{"wasted cost", func(c *Cell) float64 { return perThousand(c, c.WastedUSD) }, false, per1k},
}

// gained says what llmguard gets that baseline b does not: more full
// answers, else a faster p99, else a faster p50 ("" for nothing).
func gained(lg, b *Cell) string {
	switch p50, p99 := columns[5], columns[6]; {
	case lg.Success > b.Success:
		return fmt.Sprintf("for %.1f%% answered against %.1f%%", 100*lg.Success, 100*b.Success)
	case lg.Success < b.Success:
		return ""
	case p99.value(lg) < p99.value(b)-slack("p99", p99.value(b)):
		return fmt.Sprintf("for a p99 of %s against %s", seconds(lg.P99), seconds(b.P99))
	case p50.value(lg) < p50.value(b)-slack("p50", p50.value(b)):
		return fmt.Sprintf("for a p50 of %s against %s", seconds(lg.P50), seconds(b.P50))
	}
	return ""
}

func perThousand(c *Cell, usd float64) float64 { return usd * 1000 / float64(max(c.Requests, 1)) }

// slack is what two values may differ by and still count as equal: timings
// within 5% (and 5ms) of each other, other values exactly.
func slack(col string, v float64) float64 {
	switch col {
	case "wait/request", "p50", "p99":
		return max(0.05*v, 0.005)
	case "cost", "wasted cost", "attempts/request":
		return 1e-9 + 0.005*v
	}
	return 1e-9
}

// findings lists llmguard's missed targets and every column of every
// scenario where a baseline does better.
func findings(s *Scorecard) []Finding {
	var out []Finding
	for _, sc := range s.Scenarios {
		lg := s.Cell(sc.Name, "llmguard")
		if lg == nil {
			continue
		}
		if lg.Success < TargetSuccess {
			out = append(out, Finding{Scenario: sc.Name, Column: "success",
				Text: fmt.Sprintf("llmguard answered %.1f%% in full, below the %.1f%% target%s", 100*lg.Success, 100*TargetSuccess, why(lg.Failures))})
		}
		if lg.Hopeless > TargetHopeless {
			out = append(out, Finding{Scenario: sc.Name, Column: "hopeless attempts",
				Text: fmt.Sprintf("llmguard sent %d attempts after a target had answered with an error that could never succeed", lg.Hopeless)})
		}
		for _, st := range s.Strategies[1:] {
			b := s.Cell(sc.Name, st.Name)
			if b == nil {
				continue
			}
			for _, col := range columns {
				l, o := col.value(lg), col.value(b)
				worse := l < o-slack(col.name, o)
				if !col.higher {
					worse = l > o+slack(col.name, o)
				}
				if !worse {
					continue
				}
				f := Finding{Scenario: sc.Name, Column: col.name, Baseline: st.Name}
				f.Text = fmt.Sprintf("%s: llmguard %s, %s %s", col.name, col.format(l), st.Name, col.format(o))
				if gain := gained(lg, b); gain != "" && col.name != "success" && col.name != "p50" && col.name != "p99" {
					f.Trade = true
					f.Text += " (" + gain + ")"
				}
				out = append(out, f)
			}
		}
	}
	return out
}
