package batch

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/resilience"
)

// seq is a mock fault sequence from its parts: "529*40" is 40 times 529.
// Its last step repeats.
func seq(t *testing.T, parts ...string) []mock.Step {
	t.Helper()
	var specs []string
	for _, p := range parts {
		fault, n, ok := strings.Cut(p, "*")
		k := 1
		if ok {
			var err error
			if k, err = strconv.Atoi(n); err != nil {
				t.Fatal(err)
			}
		}
		for range k {
			specs = append(specs, fault)
		}
	}
	s, err := mock.ParseSteps(strings.Join(specs, ","))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// An overload burst on both targets mid-run: calls fail through the
// engine's retries and fallback, the run pauses instead of failing them,
// and still ends with every item answered, each once.
func TestOverloadBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &mock.Scenario{Name: "burst", Rules: []mock.Rule{
			{Match: mock.Match{Provider: "anthropic"}, Sequence: seq(t, "200*10", "529*40", "200")},
			{Match: mock.Match{Provider: "openai"}, Sequence: seq(t, "503*40", "200")},
		}}
		route := &resilience.Route{Retry: resilience.Retry{MaxAttempts: 2, BaseDelay: 10 * time.Millisecond}}
		s := newBubbleStack(t, sc, route)
		in := writeLines(t, "items.jsonl", ownItems(60))
		out := filepath.Join(t.TempDir(), "results.jsonl")
		var evs events
		sum := run(t, s.eng, in, out, &Config{Concurrency: 8, OnEvent: evs.add})
		if sum.Served != 60 || sum.Failed != 0 || sum.Left() != 0 || sum.Stopped != "" {
			t.Fatalf("summary: %+v (events %v)", sum, evs.of(EventStop))
		}
		pauses := evs.of(EventPause)
		if len(pauses) == 0 || len(evs.of(EventResume)) == 0 {
			t.Fatalf("want a pause and a resume, got %d pauses", len(pauses))
		}
		if r := pauses[0].Reason; !strings.Contains(r, "overloaded") && !strings.Contains(r, "skipped") {
			t.Errorf("pause reason %q does not say why", r)
		}
		recs := readResults(t, out)
		for id, n := range idsOf(recs) {
			if n != 1 {
				t.Errorf("id %s: %d records", id, n)
			}
		}
		if len(recs) != 60 {
			t.Errorf("%d records, want 60", len(recs))
		}
		if sum.WastedAttempts == 0 {
			t.Errorf("no wasted attempts counted: %+v", sum)
		}
	})
}

// A per-day quota on the only target pauses the run until the quota's
// reset (Pacific midnight, as Gemini's per-day quotas), says until when,
// and the run then ends with every item answered. With NoWaitPast the run
// stops instead, saying until when, and the items stay to do.
func TestDailyQuota(t *testing.T) {
	route := func() *resilience.Route {
		return &resilience.Route{Targets: []resilience.Target{{Name: "gemini/gemini-2.5-flash"}}}
	}
	scenario := func(t *testing.T) *mock.Scenario {
		return &mock.Scenario{Name: "daily", Rules: []mock.Rule{
			{Match: mock.Match{Provider: "gemini"}, Sequence: seq(t, "200*3", "daily_quota", "200")},
		}}
	}
	t.Run("pauses until the reset", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			reset := nextPacificMidnight(start)
			s := newBubbleStack(t, scenario(t), route())
			in := writeLines(t, "items.jsonl", ownItems(10))
			out := filepath.Join(t.TempDir(), "results.jsonl")
			var evs events
			sum := run(t, s.eng, in, out, &Config{Concurrency: 1, OnEvent: evs.add})
			if sum.Served != 10 || sum.Left() != 0 {
				t.Fatalf("summary: %+v", sum)
			}
			pauses := evs.of(EventPause)
			if len(pauses) == 0 {
				t.Fatal("no pause")
			}
			p := pauses[0]
			if !p.Until.Equal(reset) {
				t.Errorf("paused until %v, want the quota's reset %v", p.Until, reset)
			}
			if !strings.Contains(p.Reason, "out of quota") || !strings.Contains(p.Reason, "PerDay") && !strings.Contains(p.Reason, "quota") {
				t.Errorf("pause reason %q", p.Reason)
			}
			if p.Progress.Served > 3 || !p.Progress.Paused {
				t.Errorf("progress at the pause: %+v", p.Progress)
			}
			if got := time.Since(start); got < reset.Sub(start) {
				t.Errorf("the run took %v of virtual time, less than the wait for the reset", got)
			}
		})
	})
	t.Run("stops past no-wait-past", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			reset := nextPacificMidnight(time.Now())
			s := newBubbleStack(t, scenario(t), route())
			in := writeLines(t, "items.jsonl", ownItems(10))
			out := filepath.Join(t.TempDir(), "results.jsonl")
			sum := run(t, s.eng, in, out, &Config{Concurrency: 1, NoWaitPast: 10 * time.Minute})
			if sum.Served != 3 || sum.Left() != 7 {
				t.Fatalf("summary: %+v", sum)
			}
			if !strings.Contains(sum.Stopped, reset.UTC().Format(time.RFC3339)) || !strings.Contains(sum.Stopped, "10m0s limit") {
				t.Errorf("stopped %q: want the reset time %v and the limit", sum.Stopped, reset)
			}
			if n := len(readResults(t, out)); n != 3 {
				t.Errorf("%d records, want 3", n)
			}
		})
	})
}

// nextPacificMidnight is when a per-day quota resets (as the classifier has it).
func nextPacificMidnight(now time.Time) time.Time {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		la = time.FixedZone("PST", -8*3600)
	}
	t := now.In(la)
	return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, la).UTC()
}

// A bad key on every target stops the run with one line; what is left
// stays to do.
func TestKeyFaultStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &mock.Scenario{Name: "badkey", Rules: []mock.Rule{
			{Match: mock.Match{}, Sequence: seq(t, "200*2", "bad_key"), Per: "rule"},
		}}
		s := newBubbleStack(t, sc, nil)
		in := writeLines(t, "items.jsonl", ownItems(10))
		out := filepath.Join(t.TempDir(), "results.jsonl")
		sum := run(t, s.eng, in, out, &Config{Concurrency: 1})
		if sum.Served != 2 || sum.Failed != 0 || sum.Left() != 8 {
			t.Fatalf("summary: %+v", sum)
		}
		if !strings.Contains(sum.Stopped, "401") || strings.Contains(sum.Stopped, "\n") {
			t.Errorf("stopped %q: want the key's 401 in one line", sum.Stopped)
		}
	})
}
