package demo

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/mock"
)

// Phase is one stretch of the scripted night on the primary target. Start
// and End are fractions of the night's length.
type Phase struct {
	Name       string  `json:"name"`
	Start, End float64 `json:"-"`
	// Primary says what the primary (Anthropic) answers during the phase.
	Primary string `json:"primary"`
}

// night is the demo's script. The primary target's trouble changes over
// time; the other targets keep theirs all night. Never mutated.
var night = []Phase{
	{Name: "529 burst", Start: 0, End: 0.15, Primary: "every request: 529 overloaded_error"},
	{Name: "rate-limit storm", Start: 0.15, End: 0.4, Primary: "60% of requests: 429 rate_limit_error, retry-after 1s"},
	{Name: "calm", Start: 0.4, End: 0.75, Primary: "healthy, but 15% of answers take 1.5s"},
	{Name: "credit runs out", Start: 0.75, End: 1, Primary: `every request: 400 "Your credit balance is too low"`},
}

// Night returns the script of the primary target, phase by phase (a copy).
func Night() []Phase { return append([]Phase(nil), night...) }

// Others describes, one line each, the trouble the other targets have all night.
func Others() []string { return append([]string(nil), others...) }

var others = []string{
	"gemini/gemini-2.5-flash: per-day quota exhausted (429 RESOURCE_EXHAUSTED, PerDay)",
	"groq/llama-3.3-70b-versatile: flaky network (10% resets, 10% HTML 502, 10% truncated bodies)",
	"openai/gpt-4.1-mini: healthy, 40ms slower",
}

// slowAnswer is how long the primary's slow answers take in the calm:
// past the route's HedgeAfter, so llmguard hedges them.
const slowAnswer = 1500 * time.Millisecond

func step(kind string) mock.Step { return mock.Step{Kind: kind} }

// scenarioFor returns the mock scenario of phase i: the primary's trouble
// of the moment, then the fallback targets' standing trouble.
func scenarioFor(i int) *mock.Scenario {
	var primary mock.Rule
	primary.Match = mock.Match{Provider: "anthropic"}
	switch i {
	case 0:
		primary.Sequence = []mock.Step{step(mock.KindOverloaded)}
	case 1:
		primary.Faults = []mock.Weighted{{Step: mock.Step{Kind: mock.KindRateLimit, Arg: 1, HasArg: true}, Rate: 0.6}}
	case 2:
		primary.Faults = []mock.Weighted{{Step: mock.Step{Kind: mock.KindOK, Latency: slowAnswer}, Rate: 0.15}}
	default:
		primary.Sequence = []mock.Step{step(mock.KindCreditLow)}
	}
	return &mock.Scenario{
		Name: "demo: " + night[i].Name,
		Rules: []mock.Rule{
			primary,
			{Match: mock.Match{Provider: "gemini"}, Sequence: []mock.Step{step(mock.KindDailyQuota)}},
			{Match: mock.Match{Provider: "groq"}, Faults: []mock.Weighted{
				{Step: step(mock.KindReset), Rate: 0.1},
				{Step: step(mock.KindHTML502), Rate: 0.1},
				{Step: step(mock.KindTruncated), Rate: 0.1},
			}, Latency: mock.Latency{Median: 10 * time.Millisecond, P99: 80 * time.Millisecond}},
			{Match: mock.Match{Provider: "openai"}, Sequence: []mock.Step{{Kind: mock.KindOK, Latency: 40 * time.Millisecond}}},
		},
	}
}

// upstream is one copy of the scripted upstream on a loopback port: a mock
// per phase, chosen by the time since start. Each client gets a fresh one.
type upstream struct {
	phases []*mock.Server
	start  atomic.Int64 // unix nanos; 0 = not started (first phase)
	length time.Duration
	now    func() time.Time
	srv    *http.Server
	url    string
}

func newUpstream(seed uint64, length time.Duration, now func() time.Time) (*upstream, error) {
	u := &upstream{length: length, now: now}
	for i := range night {
		u.phases = append(u.phases, mock.New(&mock.Config{Scenario: scenarioFor(i), Seed: seed + uint64(i)}))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo: starting the mock: %w", err)
	}
	u.url = "http://" + ln.Addr().String()
	u.srv = &http.Server{Handler: u, ReadHeaderTimeout: 10 * time.Second}
	go u.srv.Serve(ln) // returns ErrServerClosed on close

	return u, nil
}

// phase returns the index of the phase at time t.
func (u *upstream) phase(t time.Time) int {
	s := u.start.Load()
	if s == 0 {
		return 0
	}
	f := float64(t.UnixNano()-s) / float64(u.length)
	for i, p := range night {
		if f < p.End {
			return i
		}
	}
	return len(night) - 1
}

// ServeHTTP hands the request to the mock of the current phase.
func (u *upstream) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	u.phases[u.phase(u.now())].ServeHTTP(rw, r)
}

// attempts counts the generation requests the mocks logged.
func (u *upstream) attempts() int {
	n := 0
	for _, m := range u.phases {
		for _, r := range m.Requests() {
			if r.Endpoint == "generate" {
				n++
			}
		}
	}
	return n
}

func (u *upstream) close() {
	for _, m := range u.phases {
		m.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = u.srv.Shutdown(ctx)
}
