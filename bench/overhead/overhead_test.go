package overhead

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A short run at a low rate fills every section with sane figures: every
// request answered on every path, latencies and costs positive, the
// gateway's allocations above the calibration's (it parses and encodes).
// Nothing here asserts a speed.
func TestRunShort(t *testing.T) {
	rep, err := Run(context.Background(), &Config{Rate: 200, Concurrency: 4, Duration: 500 * time.Millisecond, NoSearch: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Fixed == nil || rep.Throughput == nil || rep.Ladder != nil {
		t.Fatalf("sections: fixed %v, throughput %v, ladder %v", rep.Fixed != nil, rep.Throughput != nil, rep.Ladder)
	}
	for name, res := range map[string]*Result{"fixed": &rep.Fixed.Result, "throughput": rep.Throughput} {
		for i, s := range []Stats{res.Calibration, res.Proxy, res.Gateway} {
			if s.Requests == 0 || s.Errors != 0 || s.P50 <= 0 || s.P99 < s.P50 || s.Rate <= 0 || s.CPU <= 0 || s.Allocs <= 0 {
				t.Errorf("%s, %s: %+v", name, pathNames[i], s)
			}
		}
		if g := res.Added(res.Gateway); g.Allocs <= 0 || g.AllocBytes <= 0 {
			t.Errorf("%s: the gateway adds no allocation: %+v", name, g)
		}
	}
	if n := rep.Fixed.Calibration.Requests; n < 30 || n > 40 { // 200 QPS for a third of 0.5 s
		t.Errorf("calibration at 200 QPS for 167 ms: %d requests", n)
	}
	var b strings.Builder
	if err := rep.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Machine: ", "**Latency at 200 QPS**", "| llmguard |", "**Throughput at 4 connections**", "| allocated | peak RSS |", "**Targets**"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	t.Log("\n" + out)
}

// Every row of the scaling table runs and reads sanely when each is
// measured briefly: answers on every path, the gateway allocating more
// for a bigger body, and the connection counts of the upstream.
func TestScaleShort(t *testing.T) {
	sc, err := Scale(context.Background(), &ScaleConfig{Duration: 150 * time.Millisecond, Groups: []string{GroupBody, GroupStream, GroupConns}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Rows) != len(rows()) {
		t.Fatalf("%d rows, want %d", len(sc.Rows), len(rows()))
	}
	byCase := map[string]*Row{}
	for i := range sc.Rows {
		r := &sc.Rows[i]
		byCase[r.Case] = r
		for j, s := range []Stats{r.Calibration, r.Proxy, r.Gateway} {
			if s.Requests == 0 || s.Errors != 0 || s.CPU <= 0 {
				t.Errorf("%s, %s: %+v", r.Case, pathNames[j], s)
			}
		}
	}
	small, big := byCase["1 KB, anthropic → openai"], byCase["512 KB, anthropic → openai"]
	if small == nil || big == nil || big.BodyBytes < 500<<10 || small.BodyBytes > 2<<10 {
		t.Fatalf("body rows: %+v %+v", small, big)
	}
	// Not "at least the body": a translated body's texts go upstream as
	// slices of its pooled buffer, with no copy.
	if g, s := big.Added(big.Gateway).AllocBytes, small.Added(small.Gateway).AllocBytes; g < 2*s {
		t.Errorf("translating a %d-byte body allocated %.0f bytes: not twice the %.0f of a %d-byte one", big.BodyBytes, g, s, small.BodyBytes)
	}
	var b strings.Builder
	if err := sc.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Request bodies**", "| 512 KB, anthropic → anthropic |", "**Streams**", "| 1000 chunks |",
		"**Connections**", "| 256 connections |", "new conns/s", "**Targets**", "| 512 KB, anthropic → openai: CPU ≤ 3.0× the proxy's |", "| 1000 chunks: stream throughput ≥ 1.0× the proxy's |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	t.Log("\n" + b.String())
}

// The memory group's burst reads each child's resident set idle, at the
// burst's end and settled, and the table shows them.
func TestBurst(t *testing.T) {
	sc, err := Scale(context.Background(), &ScaleConfig{Groups: []string{GroupMemory}, Settle: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	u := sc.Burst
	if u == nil || len(sc.Rows) != 0 || u.Requests != burstClients*burstEach || u.BodyBytes < 500<<10 {
		t.Fatalf("burst %+v, %d rows", u, len(sc.Rows))
	}
	for _, r := range []Resident{u.Proxy, u.Gateway} {
		if residentRSS() > 0 && (r.Idle == 0 || r.End == 0 || r.Later == 0) {
			t.Errorf("resident set %+v, want each read", r)
		}
	}
	var b strings.Builder
	if err := sc.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Memory after a burst**", "| llmguard |", "after a burst of 512 KB requests: back to idle"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	t.Log("\n" + b.String())
}
