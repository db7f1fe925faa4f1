package overhead

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// This file: the reports as Markdown (tables a terminal shows as they are
// and the README publishes).

// dur formats a latency or a CPU time: µs below 1 ms, else ms.
func dur(d time.Duration) string {
	switch {
	case d > -time.Millisecond && d < time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	case d > -10*time.Millisecond && d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// size formats bytes.
func size(b float64) string {
	switch {
	case b >= 10<<20 || b <= -10<<20:
		return fmt.Sprintf("%.0f MiB", b/(1<<20))
	case b >= 1<<20 || b <= -1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case b >= 10<<10 || b <= -10<<10:
		return fmt.Sprintf("%.0f KiB", b/(1<<10))
	default:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	}
}

// ratio formats a/b as "1.23×" ("—" when b is not positive).
func ratio(a, b float64) string {
	if b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// table is a Markdown table under construction.
type table struct{ b strings.Builder }

func (t *table) row(cells ...string) {
	t.b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

// head writes the header row; right-aligned columns are all but the first.
func (t *table) head(cells ...string) {
	t.row(cells...)
	seps := make([]string, len(cells))
	for i := range seps {
		seps[i] = "--:"
	}
	seps[0] = "---"
	t.row(seps...)
}

func (t *table) String() string { return t.b.String() + "\n" }

// describe is the paragraph every report starts with: the machine.
func (m Machine) describe() string {
	s := fmt.Sprintf("Machine: %d cores (GOMAXPROCS %d)", m.Cores, m.GOMAXPROCS)
	if m.CPU != "" {
		s += ", " + m.CPU
	}
	s += ", " + m.Go
	if m.Load != "" {
		s += "; load average " + m.Load + " at the start (other work on the machine makes every figure noisier)"
	}
	return s + ".\n\n"
}

// Markdown writes the report.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("### Overhead: llmguard beside a plain reverse proxy\n\n")
	b.WriteString(r.Machine.describe())
	fmt.Fprintf(&b, "Every path is sent %s. The client and the mock run in the bench's process, `httputil.ReverseProxy` and "+
		"the gateway each in a process of its own, all on 127.0.0.1; the three paths take turns in rounds, so they share the "+
		"machine's varying load. *Added* latency is a path's less the calibration's (the client straight to the mock).\n\n", r.Request)
	if r.Fixed != nil {
		fmt.Fprintf(&b, "**Latency at %g QPS** (open loop: each request timed from when it was due, so a stall cannot hide)\n\n", r.Fixed.Rate)
		b.WriteString(r.latencyTable())
	}
	if len(r.Ladder) > 0 {
		b.WriteString(r.ladderTable())
	}
	if r.Throughput != nil {
		fmt.Fprintf(&b, "**Throughput at %d connections** (closed loop: each client sends its next request when the last is answered)\n\n", r.Concurrency)
		b.WriteString(r.throughputTable())
	}
	b.WriteString(r.costTable())
	b.WriteString(r.targetsTable())
	return writeReport(w, &b, r.Elapsed)
}

// writeReport writes a scorecard's Markdown b to w, ended by how long the
// run took.
func writeReport(w io.Writer, b *strings.Builder, took time.Duration) error {
	fmt.Fprintf(b, "The run took %.0f s.\n", took.Seconds())
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Report) latencyTable() string {
	var t table
	head := []string{"path", "requests", "errors", "p50", "p90", "p99", "added p50", "added p90", "added p99"}
	if r.Stream {
		head = append(head, "added first byte p50", "added first byte p99")
	}
	t.head(head...)
	res := &r.Fixed.Result
	for i, s := range []Stats{res.Calibration, res.Proxy, res.Gateway} {
		cells := []string{pathNames[i], fmt.Sprint(s.Requests), fmt.Sprint(s.Errors), dur(s.P50), dur(s.P90), dur(s.P99)}
		if i == 0 {
			cells = append(cells, "—", "—", "—")
			if r.Stream {
				cells = append(cells, "—", "—")
			}
		} else {
			a := res.Added(s)
			cells = append(cells, dur(a.P50), dur(a.P90), dur(a.P99))
			if r.Stream {
				cells = append(cells, dur(a.FirstP50), dur(a.FirstP99))
			}
		}
		t.row(cells...)
	}
	return t.String()
}

func (r *Report) ladderTable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Higher rates** (each path until it fails one: a path sustains a rate when every request is answered and its p99 "+
		"is at most %s; \"—\": not sent, it failed a lower rate)\n\n", dur(SustainP99))
	var t table
	t.head("QPS", "calibration p99", "proxy p99", "proxy added p99", "llmguard p99", "llmguard added p99", "llmguard errors")
	cell := func(res *Result, s Stats, added bool) string {
		switch {
		case s.Requests == 0:
			return "—"
		case added:
			return dur(res.Added(s).P99)
		case !Sustains(s):
			return dur(s.P99) + " (not sustained)"
		}
		return dur(s.P99)
	}
	for i := range r.Ladder {
		st := &r.Ladder[i]
		res := &st.Result
		errs := "—"
		if res.Gateway.Requests > 0 {
			errs = fmt.Sprint(res.Gateway.Errors)
		}
		t.row(fmt.Sprint(st.Rate), cell(res, res.Calibration, false), cell(res, res.Proxy, false), cell(res, res.Proxy, true),
			cell(res, res.Gateway, false), cell(res, res.Gateway, true), errs)
	}
	b.WriteString(t.String())
	c, p, g := r.Highest()
	top := r.Ladder[len(r.Ladder)-1].Rate
	at := func(h float64) string {
		if h == top {
			return fmt.Sprintf("≥ %g QPS (the highest tried)", h)
		}
		if h == 0 {
			return "none of the rates tried"
		}
		return fmt.Sprintf("%g QPS", h)
	}
	fmt.Fprintf(&b, "Highest rate sustained: calibration %s, proxy %s, llmguard %s.\n\n", at(c), at(p), at(g))
	return b.String()
}

func (r *Report) throughputTable() string {
	var t table
	t.head("path", "requests", "errors", "req/s", "× proxy", "p50", "p99")
	res := r.Throughput
	for i, s := range []Stats{res.Calibration, res.Proxy, res.Gateway} {
		t.row(pathNames[i], fmt.Sprint(s.Requests), fmt.Sprint(s.Errors), fmt.Sprintf("%.0f", s.Rate), ratio(s.Rate, res.Proxy.Rate),
			dur(s.P50), dur(s.P99))
	}
	return t.String()
}

// costTable: what the proxy and the gateway add per request.
func (r *Report) costTable() string {
	var b strings.Builder
	b.WriteString("**Cost per request** (CPU time, user and system, and heap allocations per request of the proxy's and the " +
		"gateway's own processes; the highest resident set each reached during the measurement)\n\n")
	var t table
	t.head("load", "path", "CPU", "× proxy", "allocations", "allocated", "peak RSS")
	add := func(load string, res *Result) {
		px, gw := res.Added(res.Proxy), res.Added(res.Gateway)
		t.row(load, pathNames[proxy], dur(px.CPU), "", fmt.Sprintf("%.0f", px.Allocs), size(px.AllocBytes), size(float64(px.PeakRSS)))
		t.row(load, pathNames[guard], dur(gw.CPU), ratio(float64(gw.CPU), float64(px.CPU)), fmt.Sprintf("%.0f", gw.Allocs), size(gw.AllocBytes),
			size(float64(gw.PeakRSS)))
	}
	if r.Fixed != nil {
		add(fmt.Sprintf("%g QPS", r.Fixed.Rate), &r.Fixed.Result)
	}
	if r.Throughput != nil {
		add(fmt.Sprintf("%d connections", r.Concurrency), r.Throughput)
	}
	b.WriteString(t.String())
	return b.String()
}

// targetsTable checks issue 18's targets against what this run measured.
func (r *Report) targetsTable() string {
	var t table
	t.head("target", "measured", "")
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**not met**"
	}
	p99 := "not measured (no 3000 QPS step in this run)"
	ok := ""
	for _, s := range append(r.Ladder, derefStep(r.Fixed)...) {
		if s.Rate == 3000 && s.Gateway.Requests > 0 {
			a := s.Added(s.Gateway).P99
			p99, ok = dur(a), verdict(Sustains(s.Gateway) && a <= 500*time.Microsecond)
		}
	}
	t.row("llmguard's added p99 ≤ 0.5 ms at 3,000 QPS", p99, ok)
	if r.Throughput != nil {
		x := r.Throughput.Gateway.Rate / r.Throughput.Proxy.Rate
		t.row(fmt.Sprintf("throughput ≥ 1.0× the proxy's (%d connections)", r.Concurrency), fmt.Sprintf("%.2f×", x), verdict(x >= 1))
	}
	var rss uint64
	for _, s := range append(derefStep(r.Fixed), Step{Result: derefResult(r.Throughput)}) {
		rss = max(rss, s.Gateway.PeakRSS)
	}
	if rss > 0 {
		t.row("llmguard's peak RSS < 50 MiB (at the fixed rate and concurrency)", size(float64(rss)), verdict(rss < 50<<20))
	}
	return "**Targets** (issue 18)\n\n" + t.String()
}

func derefResult(r *Result) Result {
	if r == nil {
		return Result{}
	}
	return *r
}

func derefStep(s *Step) []Step {
	if s == nil {
		return nil
	}
	return []Step{*s}
}
