package chaos

import (
	"time"

	"github.com/llmguard/llmguard/mock"
)

// Scenario is one row group of the scorecard: what the primary target does
// while the requests arrive. The fallback target is healthy in every
// scenario; strategies that know no fallback never reach it.
type Scenario struct {
	// Name is the scenario's short name ("bad-key").
	Name string `json:"name"`
	// Primary says what the primary target answers, in one line.
	Primary string `json:"primary"`
	// Hopeless: the primary's errors could never succeed on a retry (a bad
	// key, no credit, a spent daily quota).
	Hopeless bool `json:"hopeless,omitempty"`

	// rules are the primary's mock rules for an arrival window of w.
	rules func(w time.Duration) []mock.Rule
	// rate, when set, makes the primary enforce and announce a rate limit.
	rate func(perSecond int) *mock.RateLimit
	// keepAlive is the primary's keep-alive interval (slow first token).
	keepAlive time.Duration
}

// stallKeepAlives: a slow first token is this many keep-alives of
// stallEvery, after the headers.
const (
	stallKeepAlives = 6
	stallEvery      = 200 * time.Millisecond
)

func always(st mock.Step) func(time.Duration) []mock.Rule {
	return func(time.Duration) []mock.Rule { return []mock.Rule{{Sequence: []mock.Step{st}}} }
}

func share(st mock.Step, rate float64) func(time.Duration) []mock.Rule {
	return func(time.Duration) []mock.Rule { return []mock.Rule{{Faults: []mock.Weighted{{Step: st, Rate: rate}}}} }
}

// during: st for the first fraction f of the window, then healthy.
func during(st mock.Step, f float64) func(time.Duration) []mock.Rule {
	return func(w time.Duration) []mock.Rule {
		return []mock.Rule{{Sequence: []mock.Step{st}, For: time.Duration(float64(w) * f)}}
	}
}

func kind(k string) mock.Step { return mock.Step{Kind: k} }

func kindArg(k string, n int) mock.Step { return mock.Step{Kind: k, Arg: n, HasArg: true} }

// scenarios is the scorecard's rows, in order. Never mutated.
var scenarios = []Scenario{
	{Name: "overload-burst", Primary: "529 overloaded_error on every request for the first 40% of the window, then healthy",
		rules: during(kind(mock.KindOverloaded), 0.4)},
	{Name: "rate-limit-storm", Primary: "enforces a fifth of the offered rate; 429 rate_limit_error with retry-after and anthropic-ratelimit-* headers",
		rate: func(perSecond int) *mock.RateLimit {
			return &mock.RateLimit{Requests: max(perSecond/5, 1), Per: time.Second}
		}},
	{Name: "empty-credit", Primary: `400 "Your credit balance is too low" on every request`, Hopeless: true,
		rules: always(kind(mock.KindCreditLow))},
	{Name: "bad-key", Primary: "401 authentication_error on every request", Hopeless: true,
		rules: always(kind(mock.KindBadKey))},
	{Name: "daily-quota", Primary: "429 enforced_spend_limit_reached (the daily spend limit) on every request", Hopeless: true,
		rules: always(kind(mock.KindDailyQuota))},
	{Name: "flaky-network", Primary: "10% connection resets, 10% HTML 502 pages, 10% truncated streams; latency median 20ms, p99 200ms",
		rules: func(time.Duration) []mock.Rule {
			return []mock.Rule{{Faults: []mock.Weighted{{Step: kind(mock.KindReset), Rate: 0.1}, {Step: kind(mock.KindHTML502), Rate: 0.1},
				{Step: kind(mock.KindTruncated), Rate: 0.1}}, Latency: mock.Latency{Median: 20 * time.Millisecond, P99: 200 * time.Millisecond}}}
		}},
	{Name: "silent-target", Primary: "no status line for 4s, then the connection closes (a proxy in front of a silent upstream)",
		rules: always(kindArg(mock.KindSilent, 4))},
	{Name: "slow-first-token", Primary: "200 at once, then keep-alives for 1.2s before the first token",
		rules: always(kindArg(mock.KindStall, stallKeepAlives)), keepAlive: stallEvery},
	{Name: "midstream-failure", Primary: "30% of streams fail after 3 tokens with an in-stream overloaded_error",
		rules: share(kindArg(mock.KindMidstream, 3), 0.3)},
	{Name: "malformed-event", Primary: "30% of streams carry one event of invalid JSON after 2 tokens, then the rest of the answer",
		rules: share(kindArg(mock.KindMalformed, 2), 0.3)},
	{Name: "outage-recovery", Primary: "500 api_error on every request for the first 30% of the window, then healthy",
		rules: during(kind(mock.KindServerError), 0.3)},
}

// Scenarios returns the scorecard's scenarios in order (a copy).
func Scenarios() []Scenario { return append([]Scenario(nil), scenarios...) }

// mockScenario is s's primary as a mock scenario for a window of w.
func (s *Scenario) mockScenario(w time.Duration) *mock.Scenario {
	sc := &mock.Scenario{Name: "bench chaos: " + s.Name, Description: s.Primary}
	if s.rules != nil {
		sc.Rules = s.rules(w)
	}
	return sc
}
