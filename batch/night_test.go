package batch

import (
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/mock"
)

// nightPhase is one stretch of TestBadNight's upstream, from its start.
type nightPhase struct {
	name  string
	from  time.Duration
	rules []mock.Rule
}

// The story: 1,247 documents queued for summarising, and a bad
// night. Answers take 2s (median; 6s p99), four in flight. After three
// calm minutes both targets are down for twenty (Anthropic 529, OpenAI
// 503), then a rate-limit storm for twenty (60% of requests 429,
// retry-after 1s, on both), then Anthropic's credit runs out while OpenAI
// serves. The run pauses through the outage instead of failing items,
// warns once about the key, and ends with every document answered exactly
// once. Virtual time (synctest); the numbers are logged (go test -v -run
// TestBadNight ./batch/).
func TestBadNight(t *testing.T) {
	const docs = 1247
	synctest.Test(t, func(t *testing.T) {
		lat := mock.Latency{Median: 2 * time.Second, P99: 6 * time.Second}
		storm := []mock.Weighted{{Step: mock.Step{Kind: mock.KindRateLimit, Arg: 1, HasArg: true}, Rate: 0.6}}
		ok := []mock.Step{{Kind: mock.KindOK}}
		phases := []nightPhase{
			{"calm", 0, []mock.Rule{{Sequence: ok, Latency: lat}}},
			{"outage", 3 * time.Minute, []mock.Rule{
				{Match: mock.Match{Provider: "anthropic"}, Sequence: []mock.Step{{Kind: mock.KindOverloaded}}},
				{Match: mock.Match{Provider: "openai"}, Sequence: []mock.Step{{Kind: mock.KindOverloaded}}}}},
			{"rate-limit storm", 23 * time.Minute, []mock.Rule{{Faults: storm, Sequence: ok, Latency: lat}}},
			{"credit runs out", 43 * time.Minute, []mock.Rule{
				{Match: mock.Match{Provider: "anthropic"}, Sequence: []mock.Step{{Kind: mock.KindCreditLow}}},
				{Match: mock.Match{Provider: "openai"}, Sequence: ok, Latency: lat}}},
		}
		start := time.Now()
		servers := make([]*mock.Server, len(phases))
		for i, p := range phases {
			servers[i] = mock.New(&mock.Config{Scenario: &mock.Scenario{Name: p.name, Rules: p.rules}, Seed: uint64(i + 1)})
		}
		var attempts [4]atomic.Int64
		srv := pipenet.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			i, since := 0, time.Since(start)
			for i+1 < len(phases) && since >= phases[i+1].from {
				i++
			}
			attempts[i].Add(1)
			servers[i].ServeHTTP(w, r)
		}))
		t.Cleanup(func() {
			for _, m := range servers {
				m.Close()
			}
			srv.Close()
		})
		s := newStackOn(t, servers[0], srv.URL, srv.Client(), nil) // anthropic, then openai; default retries
		in := writeLines(t, "items.jsonl", ownItems(docs))
		out := filepath.Join(t.TempDir(), "results.jsonl")
		var evs events
		sum := run(t, s.eng, in, out, &Config{Concurrency: 4, OnEvent: evs.add})
		took := time.Since(start)

		if sum.Served != docs || sum.Failed != 0 || sum.Left() != 0 || sum.Stopped != "" {
			t.Fatalf("summary: %+v", sum)
		}
		recs := readResults(t, out)
		for id, n := range idsOf(recs) {
			if n != 1 {
				t.Errorf("id %s: %d records", id, n)
			}
		}
		if len(recs) != docs {
			t.Errorf("%d records, want %d", len(recs), docs)
		}
		pauses, warns := evs.of(EventPause), evs.of(EventWarn)
		if len(pauses) == 0 || len(evs.of(EventResume)) == 0 {
			t.Errorf("%d pauses and %d resumes: the outage should pause the run", len(pauses), len(evs.of(EventResume)))
		}
		if len(warns) != 1 || !strings.Contains(warns[0].Reason, "anthropic/claude-sonnet-4-5") {
			t.Errorf("warnings: %v (want one, for the key whose credit ran out)", warns)
		}
		var total int64
		for i, p := range phases {
			n := attempts[i].Load()
			total += n
			t.Logf("%-16s upstream attempts %d", p.name, n)
		}
		var doneBy [4]int
		for _, ev := range evs.of(EventItem) {
			i, since := 0, ev.Time.Sub(start)
			for i+1 < len(phases) && since >= phases[i+1].from {
				i++
			}
			doneBy[i]++
		}
		t.Logf("%d documents answered (by phase: %v), 0 failed, in %s of virtual time; %d pauses, first: %s",
			sum.Served, doneBy, took.Round(time.Second), len(pauses), pauses[0].Reason)
		t.Logf("upstream attempts %d (runner counts %d, %d wasted), cost $%.4f", total, sum.Attempts, sum.WastedAttempts, sum.CostUSD)
	})
}
