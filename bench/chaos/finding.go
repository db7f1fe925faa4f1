package chaos

import "fmt"

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
	// Trade: llmguard pays this column for a higher success rate than
	// the baseline's (a retry costs an attempt; a fallback costs its
	// price); otherwise it does worse for nothing.
	Trade bool `json:"trade"`
	// Text says it in one line.
	Text string `json:"text"`
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
				Text: fmt.Sprintf("llmguard answered %.1f%% in full, below the %.1f%% target", 100*lg.Success, 100*TargetSuccess)})
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
				f := Finding{Scenario: sc.Name, Column: col.name, Baseline: st.Name, Trade: col.name != "success" && lg.Success > b.Success}
				f.Text = fmt.Sprintf("%s: llmguard %s, %s %s", col.name, col.format(l), st.Name, col.format(o))
				if f.Trade {
					f.Text += fmt.Sprintf(" (for %.1f%% answered against %.1f%%)", 100*lg.Success, 100*b.Success)
				}
				out = append(out, f)
			}
		}
	}
	return out
}
