package chaos

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestScorecard runs every scenario for every strategy, briefly, and checks
// what holds whatever the machine's load: the table is whole, every
// request is counted once, and llmguard sends nothing after a target said
// its key or account could never succeed while the baselines do.
func TestScorecard(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every scenario for a few seconds")
	}
	s, err := Run(context.Background(), &Options{Requests: 10, Window: 200 * time.Millisecond, Parallel: len(scenarios)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(s.Cells), len(scenarios)*len(strategies); got != want {
		t.Fatalf("%d cells, want %d", got, want)
	}
	for _, sc := range scenarios {
		for _, st := range strategies {
			c := s.Cell(sc.Name, st.Name)
			if c == nil {
				t.Errorf("no cell for %s × %s", sc.Name, st.Name)
				continue
			}
			if c.Full+c.Errors+c.Truncated != c.Requests || c.Requests != 10 {
				t.Errorf("%s × %s: %d full + %d errors + %d truncated, want %d requests", sc.Name, st.Name, c.Full, c.Errors, c.Truncated, c.Requests)
			}
			if c.Open != 0 {
				t.Errorf("%s × %s: %d streams left open", sc.Name, st.Name, c.Open)
			}
			if c.Attempts > c.Metered {
				t.Errorf("%s × %s: the mocks logged %d attempts, the meter saw only %d", sc.Name, st.Name, c.Attempts, c.Metered)
			}
		}
	}
	var md bytes.Buffer
	if err := s.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(md.String(), "\n| "); rows != len(s.Cells)+1 {
		t.Errorf("the Markdown table has %d rows, want %d and a header:\n%s", rows, len(s.Cells), md.String())
	}
	var svg bytes.Buffer
	if err := s.SVG(&svg); err != nil {
		t.Fatal(err)
	}
	if n := bars(t, svg.Bytes()); n != 2*len(s.Cells) {
		t.Errorf("the chart has %d bars, want %d", n, 2*len(s.Cells))
	}
}

// TestHopelessAttempts: once a target said the key is bad or the credit
// is gone, llmguard sends it nothing more, while a client that retries
// every error, or never retries but repeats every request, keeps sending.
//
// Each strategy sends its requests one after another, so that "once said"
// is plain: at a steady rate a request may cross an answer in flight
// (admitted between the answer's arrival and the breaker opening, a moment
// a loaded machine stretches) and count as hopeless by its timestamps.
func TestHopelessAttempts(t *testing.T) {
	want, err := answers()
	if err != nil {
		t.Fatal(err)
	}
	const requests = 20
	opt := (&Options{Requests: requests, Window: time.Second}).withDefaults()
	names := []string{"bad-key", "empty-credit"}
	scs, err := pick(names)
	if err != nil {
		t.Fatal(err)
	}
	s := &Scorecard{Cells: make([]Cell, len(scs)*len(strategies))}
	var wg sync.WaitGroup
	for j := range scs {
		for i := range strategies {
			wg.Go(func() {
				r, err := newRig(&scs[j], &strategies[i], &opt)
				if err != nil {
					t.Error(err)
					return
				}
				defer r.close()
				r.reset()
				for k := range requests {
					r.do(context.Background(), k, want[k%len(want)])
				}
				s.Cells[j*len(strategies)+i] = r.cell()
			})
		}
	}
	wg.Wait()
	for _, name := range names {
		if c := s.Cell(name, "llmguard"); c == nil || c.Hopeless != 0 {
			t.Errorf("%s: llmguard sent hopeless attempts, want 0: %+v", name, c)
		}
		for _, b := range []string{"naive", "no-retry"} {
			if c := s.Cell(name, b); c == nil || c.Hopeless == 0 {
				t.Errorf("%s: %s sent no hopeless attempt (it retries or repeats every request): %+v", name, b, c)
			}
		}
		if c := s.Cell(name, "no-retry"); c == nil || c.Full != 0 || c.Errors != c.Requests {
			t.Errorf("%s: no-retry got a full answer or fewer errors than requests, want every request a clean error: %+v", name, c)
		}
	}
}

// bars parses an SVG document and counts its bars (rects with a title).
func bars(t *testing.T, doc []byte) int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	n, depth, rectAt := 0, 0, -1
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the chart is not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			depth++
			if e.Name.Local == "rect" {
				rectAt = depth
			}
			if e.Name.Local == "title" && rectAt == depth-1 {
				n++
			}
		case xml.EndElement:
			if e.Name.Local == "rect" {
				rectAt = -1
			}
			depth--
		}
	}
	return n
}

func TestWastedOnHopeless(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	try := func(target, rid string, a, b int) attempt {
		return attempt{target: target, rid: rid, start: at(a), end: at(b)}
	}
	ids := map[string]bool{"r1": true, "r2": true, "r3": true, "r4": true, "r5": true}
	atts := []attempt{
		try("p", "r1", 0, 10),  // the first 401: how the client learns
		try("p", "r2", 5, 12),  // sent before it came back: not waste
		try("p", "r3", 11, 13), // sent once told: waste
		try("p", "ok", 20, 30), // another answer: not counted
		try("f", "r4", 25, 26), // another target learns on its own
		try("f", "r5", 27, 28), // and then wastes
		try("p", "", 40, 41),   // no answer (reset): not counted
	}
	if got := wastedOnHopeless(atts, ids); got != 2 {
		t.Errorf("wastedOnHopeless = %d, want 2", got)
	}
}

func TestPick(t *testing.T) {
	got, err := pick([]string{"outage-recovery", "bad-key"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "bad-key" || got[1].Name != "outage-recovery" {
		t.Errorf("pick = %v, want bad-key then outage-recovery (scorecard order)", got)
	}
	if _, err := pick([]string{"bad-kee"}); err == nil || !strings.Contains(err.Error(), `"bad-kee"`) {
		t.Errorf("pick(bad-kee) = %v, want an error naming it", err)
	}
}

func TestOnWire(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	span := func(a, b int) attempt { return attempt{start: at(a), end: at(b)} }
	tests := []struct {
		name string
		atts []attempt
		want time.Duration
	}{
		{"none", nil, 0},
		{"one", []attempt{span(10, 30)}, 20 * time.Millisecond},
		{"apart", []attempt{span(40, 50), span(0, 10)}, 20 * time.Millisecond},
		{"overlapping hedge", []attempt{span(0, 30), span(20, 60)}, 60 * time.Millisecond},
		{"nested", []attempt{span(0, 60), span(10, 20)}, 60 * time.Millisecond},
		{"cut to the request", []attempt{span(-10, 10), span(90, 120)}, 20 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := onWire(tt.atts, at(0), at(100)); got != tt.want {
				t.Errorf("onWire = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestQuantile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	tests := []struct {
		got  []time.Duration
		n    int
		q    float64
		want float64
	}{
		{ms(30, 10, 20, 40), 4, 0.5, 0.02},
		{ms(30, 10, 20, 40), 4, 0.99, 0.04},
		{ms(10, 20), 4, 0.5, 0.02},  // two of four never answered: the median is the last answer
		{ms(10, 20), 4, 0.99, -1},   // the p99 is one that never came
		{nil, 4, 0.5, -1},           // nothing answered
		{ms(10), 1000, 0.001, 0.01}, // one in a thousand answered, at once
	}
	for _, tt := range tests {
		if got := quantile(tt.got, tt.n, tt.q); got != tt.want {
			t.Errorf("quantile(%v, %d, %v) = %v, want %v", tt.got, tt.n, tt.q, got, tt.want)
		}
	}
}

func TestHopeless(t *testing.T) {
	for fault, want := range map[string]bool{
		"bad_key": true, "credit_low": true, "daily_quota": true, "insufficient_quota": true,
		"overloaded": false, "rate_limit:1": false, "silent:3": false, "ok": false, "reset": false, "bad_fault_spec": false,
	} {
		if got := hopeless(fault); got != want {
			t.Errorf("hopeless(%q) = %v, want %v", fault, got, want)
		}
	}
}

// TestFindings: a target missed, a column lost for nothing and a column
// traded for more answers are each reported, and ties are not.
func TestFindings(t *testing.T) {
	s := &Scorecard{Scenarios: []Scenario{{Name: "x"}}, Strategies: Strategies()}
	cell := func(st string, success float64, p99 float64, hopeless int) Cell {
		return Cell{Scenario: "x", Strategy: st, Requests: 1000, Full: int(success * 1000), Success: success, P50: 0.01, P99: p99,
			Hopeless: hopeless, AttemptsPerRequest: 1}
	}
	s.Cells = []Cell{
		cell("llmguard", 0.99, 0.5, 2),
		cell("naive", 0.99, 0.2, 5),         // faster at the same success: a finding
		cell("no-retry", 0.5, -1, 0),        // fewer hopeless attempts but fewer answers: a trade
		cell("retry-429-5xx", 0.99, 0.5, 2), // a tie
	}
	got := findings(s)
	want := []Finding{
		{Scenario: "x", Column: "success", Text: "llmguard answered 99.0% in full, below the 99.9% target"},
		{Scenario: "x", Column: "hopeless attempts", Text: "llmguard sent 2 attempts after a target had answered with an error that could never succeed"},
		{Scenario: "x", Column: "p99", Baseline: "naive", Text: "p99: llmguard 0.500s, naive 0.200s"},
		{Scenario: "x", Column: "hopeless attempts", Baseline: "no-retry", Trade: true,
			Text: "hopeless attempts: llmguard 2, no-retry 0 (for 99.0% answered against 50.0%)"},
	}
	if len(got) != len(want) {
		t.Fatalf("findings:\n%v\nwant:\n%v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("finding %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}
