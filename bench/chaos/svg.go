package chaos

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// The chart: two panels of grouped bars, a group per scenario and a bar
// per strategy: the share of full answers, and the upstream attempts per
// request. Plain SVG 1.1 text, no script and no external resource.

// colors are the strategies' bar colours, in strategy order.
var colors = []string{"#1b7837", "#d6604d", "#f4a582", "#92c5de", "#4393c3"}

const (
	barW      = 9
	groupGap  = 16
	panelH    = 180
	left      = 56
	panelGap  = 120 // room for the scenario names under a panel
	legendTop = 40
)

// SVG writes the scorecard's chart.
func (s *Scorecard) SVG(w io.Writer) error {
	nStrat := len(s.Strategies)
	groupW := nStrat*barW + groupGap
	width := left + len(s.Scenarios)*groupW + 24
	top1 := legendTop + 40
	top2 := top1 + panelH + panelGap
	height := top2 + panelH + 90
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold">llmguard bench chaos: %d requests per cell, seed %d</text>`+"\n", left, s.Requests, s.Seed)
	for i, st := range s.Strategies {
		x := left + i*130
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			x, legendTop-9, colors[i%len(colors)], x+14, legendTop, html.EscapeString(st.Name))
	}
	maxAtt := 1.0
	for _, c := range s.Cells {
		maxAtt = math.Max(maxAtt, c.AttemptsPerRequest)
	}
	maxAtt = 4 * math.Ceil(maxAtt/4) // whole numbers on the grid's five lines
	s.panel(&b, top1, groupW, "full answers", 1, func(c *Cell) float64 { return c.Success },
		func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) })
	s.panel(&b, top2, groupW, "upstream attempts per request", maxAtt, func(c *Cell) float64 { return c.AttemptsPerRequest },
		func(v float64) string { return fmt.Sprintf("%g", v) })
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// panel draws one panel at top: axis, grid, a group of bars per scenario
// (value(c) of top), the scenario names.
func (s *Scorecard) panel(b *strings.Builder, top, groupW int, title string, top1 float64, value func(*Cell) float64, label func(float64) string) {
	bottom := top + panelH
	right := left + len(s.Scenarios)*groupW
	fmt.Fprintf(b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", left, top-12, html.EscapeString(title))
	for i := 0; i <= 4; i++ {
		v := top1 * float64(i) / 4
		y := bottom - int(float64(panelH)*float64(i)/4)
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#dddddd"/><text x="%d" y="%d" text-anchor="end">%s</text>`+"\n",
			left, y, right, y, left-6, y+4, label(v))
	}
	for gi, sc := range s.Scenarios {
		x0 := left + gi*groupW + groupGap/2
		for si, st := range s.Strategies {
			c := s.Cell(sc.Name, st.Name)
			if c == nil {
				continue
			}
			v := math.Min(value(c)/top1, 1)
			h := int(math.Round(v * panelH))
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s, %s: %s</title></rect>`+"\n",
				x0+si*barW, bottom-h, barW-1, h, colors[si%len(colors)], html.EscapeString(sc.Name), html.EscapeString(st.Name), label(value(c)))
		}
		cx := x0 + len(s.Strategies)*barW/2
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end" transform="rotate(-35 %d %d)">%s</text>`+"\n",
			cx, bottom+14, cx, bottom+14, html.EscapeString(sc.Name))
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333333"/>`+"\n", left, bottom, right, bottom)
}
