package overhead

import (
	"fmt"
	"io"
	"strings"
)

// groupTitles introduce each group's table.
var groupTitles = map[string]string{
	GroupBody: "**Request bodies** (2 clients; a conversation whose text has newlines, quotes and non-ASCII; " +
		"same dialect, and Anthropic in → OpenAI out; the proxy forwards the same body as is)",
	GroupStream: "**Streams** (2 clients; an OpenAI stream of N chunks from a zero-latency upstream that flushes each, as providers do)",
	GroupConns:  "**Connections** (N clients, a short OpenAI chat completion; *new conns/s*: connections opened to the upstream)",
}

// Markdown writes the scaling table, one table per group.
func (s *Scaling) Markdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("### Scaling: costs that grow with the work\n\n")
	b.WriteString(s.Machine.describe())
	b.WriteString("The rows run in order on one stack on 127.0.0.1: the client straight to the upstream (the calibration), through " +
		"`httputil.ReverseProxy` and through the gateway (each in a process of its own), taking turns in two rounds. *CPU* " +
		"(user and system) and *allocs*/*allocated* (heap) are per request, of the proxy's and the gateway's own processes: " +
		"CPU time is the steadiest figure on a shared machine; throughput is not.\n\n")
	for _, g := range []string{GroupBody, GroupStream, GroupConns} {
		var t table
		for _, r := range s.Rows {
			if r.Group != g {
				continue
			}
			if t.b.Len() == 0 {
				b.WriteString(groupTitles[g] + "\n\n")
				head := []string{"case", "proxy CPU", "llmguard CPU", "×", "proxy allocs", "llmguard allocs",
					"proxy allocated", "llmguard allocated", "proxy req/s", "llmguard req/s", "×"}
				switch g {
				case GroupBody:
					head = append(head, "llmguard allocated ÷ body")
				case GroupConns, GroupStream:
					head = append(head, "proxy new conns/s", "llmguard new conns/s")
				}
				t.head(head...)
			}
			px, gw := r.Added(r.Proxy), r.Added(r.Gateway)
			cells := []string{r.Case, dur(px.CPU), dur(gw.CPU), ratio(float64(gw.CPU), float64(px.CPU)),
				fmt.Sprintf("%.0f", px.Allocs), fmt.Sprintf("%.0f", gw.Allocs), size(px.AllocBytes), size(gw.AllocBytes),
				fmt.Sprintf("%.0f", px.Rate), fmt.Sprintf("%.0f", gw.Rate), ratio(gw.Rate, px.Rate)}
			switch g {
			case GroupBody:
				cells = append(cells, fmt.Sprintf("%.1f", gw.AllocBytes/float64(r.BodyBytes)))
			case GroupConns, GroupStream:
				cells = append(cells, fmt.Sprintf("%.0f", px.Conns), fmt.Sprintf("%.0f", gw.Conns))
			}
			t.row(cells...)
		}
		if t.b.Len() > 0 {
			b.WriteString(t.String())
		}
	}
	b.WriteString(s.Burst.markdown())
	b.WriteString(s.targets())
	return writeReport(w, &b, s.Elapsed)
}

// targets checks issue 19's targets against the rows measured.
func (s *Scaling) targets() string {
	var t table
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**not met**"
	}
	for _, r := range s.Rows {
		px, gw := r.Added(r.Proxy), r.Added(r.Gateway)
		switch {
		case r.Group == GroupBody && strings.HasPrefix(r.Case, "512 KB"):
			limit := 1.5
			if from, to, _ := strings.Cut(strings.TrimPrefix(r.Case, "512 KB, "), " → "); from != to {
				limit = 3
			}
			x := float64(gw.CPU) / float64(px.CPU)
			t.row(fmt.Sprintf("%s: CPU ≤ %.1f× the proxy's", r.Case, limit), fmt.Sprintf("%.2f×", x), verdict(x <= limit))
			a := gw.AllocBytes / float64(r.BodyBytes)
			t.row(r.Case+": allocated ≤ 2× the body", fmt.Sprintf("%.1f×", a), verdict(a <= 2))
		case r.Group == GroupStream:
			x := gw.Rate / px.Rate
			t.row(r.Case+": stream throughput ≥ 1.0× the proxy's", fmt.Sprintf("%.2f×", x), verdict(x >= 1))
		}
	}
	if u := s.Burst; u != nil && u.Gateway.Idle > 0 {
		g := u.Gateway
		t.row(fmt.Sprintf("llmguard's resident set %s after a burst of 512 KB requests: back to idle (within %s)", u.Settle, size(burstSlack)),
			fmt.Sprintf("%s (idle %s)", size(float64(g.Later)), size(float64(g.Idle))), verdict(g.Later <= g.Idle+burstSlack))
	}
	if t.b.Len() == 0 {
		return ""
	}
	var b table
	b.head("target (issue 19)", "measured", "")
	return "**Targets**\n\n" + b.b.String() + t.String()
}
