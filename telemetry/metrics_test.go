package telemetry

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/resilience"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestDomain(t *testing.T) {
	for _, c := range []struct {
		class classify.Class
		want  string
	}{
		{classify.RateLimited, DomainProvider},
		{classify.Overloaded, DomainProvider},
		{classify.ServerError, DomainProvider},
		{classify.QuotaExhausted, DomainProvider},
		{classify.Auth, DomainProvider},
		{classify.Permission, DomainProvider},
		{classify.Unknown, DomainProvider},
		{classify.Timeout, DomainNetwork},
		{classify.Network, DomainNetwork},
		{classify.NotFound, DomainCaller},
		{classify.InvalidRequest, DomainCaller},
		{classify.ContextLengthExceeded, DomainCaller},
		{classify.RequestTooLarge, DomainCaller},
		{classify.ContentFiltered, DomainCaller},
	} {
		if got := Domain(c.class); got != c.want {
			t.Errorf("Domain(%s) = %s, want %s", c.class, got, c.want)
		}
	}
}

func TestSkipReason(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"breaker open", "breaker_open"},
		{"key openai: breaker open", "breaker_open"},
		{"breaker half-open, probes in flight", "breaker_open"},
		{"retry budget exhausted", "retry_budget"},
		{"concurrency limit: no slot within 2s", "concurrency"},
		{"server asked to wait 1m0s, more than max_wait 30s", "wait_too_long"},
		{"wait 3s does not fit the time left", "deadline"},
		{"max_total_attempts reached", "max_attempts"},
		{"state store: dial tcp 127.0.0.1:6379: connection refused", "state_store"},
		{"context window 8000 < 12000 tokens", "ineligible"},
		{"pacing: the announced rate limit has no request for 7s, more than 5s", "pacing"},
		{"pacing: the caller went away waiting for its turn", "pacing"},
	} {
		if got := skipReason(c.in); got != c.want {
			t.Errorf("skipReason(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestLabelsBounded: names no route lists count as "other", whatever a
// client sends.
func TestLabelsBounded(t *testing.T) {
	m := New(&Options{Routes: map[string][]string{"default": {"openai/gpt-4o"}}})
	for i := range 50 {
		m.Event(resilience.Event{Kind: resilience.EventFailure, Route: "default", Target: fmt.Sprintf("openai/made-up-%d", i),
			Verdict: &classify.Verdict{Class: classify.NotFound}})
		m.Request(&Request{Dialect: "openai", Route: fmt.Sprintf("made-up-%d", i), Target: fmt.Sprintf("openai/made-up-%d", i),
			Model: fmt.Sprintf("made-up-%d", i), Usage: usage(10, 5)})
	}
	if n := testutil.CollectAndCount(m.attempts); n != 1 {
		t.Errorf("%d attempt series, want 1", n)
	}
	if n := testutil.CollectAndCount(m.requests); n != 1 {
		t.Errorf("%d request series, want 1", n)
	}
	if got := testutil.ToFloat64(m.attempts.WithLabelValues("other", "not_found", "caller")); got != 50 {
		t.Errorf("other attempts = %v, want 50", got)
	}
}

// TestEvents: each event kind lands in its family.
func TestEvents(t *testing.T) {
	const a, b = "anthropic/claude-sonnet-4-5", "openai/gpt-4o"
	m := New(&Options{Routes: map[string][]string{"default": {a, b}}, Status: func() []resilience.TargetStatus {
		return []resilience.TargetStatus{{Target: a, Breaker: "open"}, {Target: "openai/invented", Breaker: "open"}}
	}})
	v := &classify.Verdict{Class: classify.Overloaded, Wait: 0}
	hinted := &classify.Verdict{Class: classify.RateLimited, Wait: 2e9}
	for _, ev := range []resilience.Event{
		{Kind: resilience.EventAttempt, Target: a, Attempt: 1},
		{Kind: resilience.EventFailure, Target: a, Attempt: 1, Verdict: v},
		{Kind: resilience.EventRetry, Target: a, Attempt: 2, Verdict: v, Wait: 5e8},
		{Kind: resilience.EventRetry, Target: a, Attempt: 3, Verdict: hinted, Wait: 2e9},
		{Kind: resilience.EventFailure, Target: a, Attempt: 2},
		{Kind: resilience.EventFallback, From: a, Target: b, Verdict: v},
		{Kind: resilience.EventFallback, From: a, Target: b, Reason: "hedge: no answer within 2s"},
		{Kind: resilience.EventHedgeWon, From: a, Target: b},
		{Kind: resilience.EventPace, Target: a, Wait: 3e8},
		{Kind: resilience.EventPace, Target: a, Wait: 2e9},
		{Kind: resilience.EventSkip, Target: a, Reason: "retry budget exhausted"},
		{Kind: resilience.EventSkip, Target: a, Reason: "state store: refused"},
		{Kind: resilience.EventBreaker, Target: a, From: "closed", To: "open"},
		{Kind: resilience.EventBreaker, Target: b, From: "closed", To: "open", Reason: "key openai"},
		{Kind: resilience.EventSuccess, Target: b, Attempt: 1},
		{Kind: resilience.EventSuccess, Target: "static", Reason: "static fallback"},
		{Kind: resilience.EventGiveUp, Route: "default", Err: &resilience.RouteError{Err: resilience.ErrDeadline}},
		{Kind: resilience.EventGiveUp, Route: "default", Err: errors.New("odd")},
	} {
		m.Event(ev)
	}
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"attempts overloaded", testutil.ToFloat64(m.attempts.WithLabelValues(a, "overloaded", "provider")), 1},
		{"attempts without verdict", testutil.ToFloat64(m.attempts.WithLabelValues(a, "", "gateway")), 1},
		{"attempts success", testutil.ToFloat64(m.attempts.WithLabelValues(b, "", "")), 1},
		{"retries", testutil.ToFloat64(m.retries.WithLabelValues(a, "overloaded")), 1},
		{"backoff wait", testutil.ToFloat64(m.retryWait.WithLabelValues(a, "backoff")), 0.5},
		{"hint wait", testutil.ToFloat64(m.retryWait.WithLabelValues(a, "hint")), 2},
		{"fallback", testutil.ToFloat64(m.fallbacks.WithLabelValues(a, b, "overloaded")), 1},
		{"hedge fallback", testutil.ToFloat64(m.fallbacks.WithLabelValues(a, b, "hedge")), 1},
		{"hedge started", testutil.ToFloat64(m.hedges.WithLabelValues(b, "started")), 1},
		{"hedge won", testutil.ToFloat64(m.hedges.WithLabelValues(b, "won")), 1},
		{"pacing delays", float64(histCount(t, m, "llmguard_pacing_delay_seconds")), 2},
		{"pacing seconds", histSum(t, m, "llmguard_pacing_delay_seconds"), 2.3},
		{"budget", testutil.ToFloat64(m.budgetOut.WithLabelValues(a)), 1},
		{"state store", testutil.ToFloat64(m.stateFail.WithLabelValues(a)), 1},
		{"breaker", testutil.ToFloat64(m.breakerTrans.WithLabelValues(a, "target", "closed", "open")), 1},
		{"key breaker", testutil.ToFloat64(m.breakerTrans.WithLabelValues(b, "key", "closed", "open")), 1},
		{"key breaker state", testutil.ToFloat64(m.keyBreaker.WithLabelValues("openai")), 2},
		{"give up deadline", testutil.ToFloat64(m.giveUps.WithLabelValues("default", "deadline")), 1},
		{"give up other", testutil.ToFloat64(m.giveUps.WithLabelValues("default", "other")), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	want := `
# HELP llmguard_breaker_state State of a target's circuit breaker: 0 closed, 1 half_open, 2 open.
# TYPE llmguard_breaker_state gauge
llmguard_breaker_state{target="anthropic/claude-sonnet-4-5"} 2
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "llmguard_breaker_state"); err != nil {
		t.Error(err)
	}
}

// TestNil: a nil *Metrics ignores everything.
func TestNil(t *testing.T) {
	var m *Metrics
	m.Event(resilience.Event{Kind: resilience.EventFailure})
	m.Request(&Request{})
}

// TestGrafanaDashboard: every metric the Grafana dashboard in docs queries
// is one this package registers (a renamed family breaks this test, not
// the operator's dashboard).
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile("../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string } `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	m := New(&Options{Status: func() []resilience.TargetStatus { return []resilience.TargetStatus{{Target: "x"}} }})
	known := map[string]bool{"llmguard_breaker_state": true, "llmguard_inflight": true, "llmguard_queued": true}
	ch := make(chan *prometheus.Desc, 100)
	m.Registry().Describe(ch)
	close(ch)
	for d := range ch {
		s := d.String()
		if _, rest, ok := strings.Cut(s, `fqName: "`); ok {
			name, _, _ := strings.Cut(rest, `"`)
			known[name] = true
		}
	}
	re := regexp.MustCompile(`\b(llmguard_[a-z_]+|gen_ai_[a-z_]+)`)
	n := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, name := range re.FindAllString(tg.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
				if !known[base] && !strings.HasPrefix(base, "gen_ai_provider") && !strings.HasPrefix(base, "gen_ai_request") && !strings.HasPrefix(base, "gen_ai_token") {
					t.Errorf("the Grafana dashboard queries %s, which no family registers", name)
				}
				n++
			}
		}
	}
	if n < 15 {
		t.Errorf("only %d metric references in the dashboard", n)
	}
}

// TestWastedFromEngine: what the engine says failed attempts cost counts
// as wasted, on the answering target ("" when none answered).
func TestWastedFromEngine(t *testing.T) {
	m := New(&Options{Routes: map[string][]string{"default": {"openai/gpt-4o"}}})
	m.Request(&Request{Dialect: "openai", Route: "default", Target: "openai/gpt-4o", WastedUSD: 0.25})
	m.Request(&Request{Dialect: "openai", Route: "default", Outcome: OutcomeError, WastedUSD: 0.5})
	if got := testutil.ToFloat64(m.wasted.WithLabelValues("openai/gpt-4o")); got != 0.25 {
		t.Errorf("wasted on the target = %v, want 0.25", got)
	}
	if got := testutil.ToFloat64(m.wasted.WithLabelValues("")); got != 0.5 {
		t.Errorf("wasted with no target = %v, want 0.5", got)
	}
}

// TestRareEventsStartAtZero: the counters of rare events are listed at 0
// for the configured routes and targets before anything happened, so a
// scrape shows their families and rate() has a series; a call over its
// spend ceiling gives up as max_cost.
func TestRareEventsStartAtZero(t *testing.T) {
	m := New(&Options{Routes: map[string][]string{"default": {"openai/gpt-4o", "anthropic/claude-sonnet-4-5"}}})
	for _, c := range []struct {
		family string
		want   int
	}{
		{"llmguard_give_ups_total", len(giveUpReasons)},
		{"llmguard_hedges_total", 4},
		{"llmguard_retry_budget_exhausted_total", 2},
		{"llmguard_state_store_fallbacks_total", 2},
		{"llmguard_stream_malformed_events_total", 2},
	} {
		n, err := testutil.GatherAndCount(m.Registry(), c.family)
		if err != nil || n != c.want {
			t.Errorf("%s: %d series (%v), want %d at zero", c.family, n, err, c.want)
		}
	}
	m.Event(resilience.Event{Kind: resilience.EventGiveUp, Route: "default", Err: &resilience.RouteError{Err: resilience.ErrMaxCost}})
	if got := testutil.ToFloat64(m.giveUps.WithLabelValues("default", "max_cost")); got != 1 {
		t.Errorf("give ups max_cost = %v, want 1", got)
	}
}
