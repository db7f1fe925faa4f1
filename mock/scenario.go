package mock

import (
	"math"
	"math/rand/v2"
	"path"
	"time"
)

// Scenario scripts the mock's faults. The zero Scenario (and a nil one)
// is healthy: every request succeeds. A Scenario is read-only once given to
// New and may be shared by several servers.
type Scenario struct {
	// Name names the scenario in logs.
	Name string
	// Description says what it does, for --list and docs.
	Description string
	// Seed seeds the random source for rates and latency distributions;
	// Config.Seed overrides it; when both are zero the seed is 1.
	Seed uint64
	// Rules are tried in order; the first that matches a request decides
	// its answer. A request no rule matches succeeds.
	Rules []Rule
}

// Rule answers the requests its Match selects. The zero Rule matches every
// generation request and answers it with success. A Rule is read-only once
// its Scenario is given to New.
type Rule struct {
	// Match selects the requests the rule answers.
	Match Match
	// Sequence is answered in order, one step per request. When it is used
	// up: with Faults, each later request draws from Faults; with Repeat,
	// the sequence starts again; otherwise its last step repeats forever.
	Sequence []Step
	// Repeat loops Sequence.
	Repeat bool
	// Faults are drawn at random (seeded) once Sequence is used up: each
	// with its Rate; the remaining probability is a success.
	Faults []Weighted
	// Latency is waited before answering (a step's own @latency wins).
	Latency Latency
	// Per scopes the sequence counter: "provider" (default: each provider
	// counts its own requests), "model" (each provider+model) or "rule"
	// (one counter for all requests the rule matches).
	Per string
	// After and For limit the rule to a span of time measured from when the
	// server started (or was last Reset): it matches from After on, for For
	// (zero: for ever). Every, when set, repeats the span with that period.
	// The zero values make the rule match at all times.
	After, For, Every time.Duration
}

// active reports whether the rule's time span includes elapsed, the time
// since the server started.
func (r *Rule) active(elapsed time.Duration) bool {
	if r.Every > 0 {
		elapsed %= r.Every
	}
	if elapsed < r.After {
		return false
	}
	return r.For == 0 || elapsed < r.After+r.For
}

// Match selects requests. Empty fields match everything; the zero Match
// selects every generation request.
type Match struct {
	// Provider is a provider or dialect name: "anthropic", "openai" (also
	// every OpenAI-compatible prefix such as /deepseek/chat/completions),
	// "azure", "gemini", or a path-prefix name such as "deepseek".
	Provider string
	// Model is a glob (path.Match syntax) on the requested model.
	Model string
	// Endpoint is "generate" (the default: messages, chat completions,
	// responses, generateContent, and embeddings), "embeddings" (embeddings
	// only), "models" (GET …/models) or "any".
	Endpoint string
	// Stream, when set, matches only streaming (true) or non-streaming
	// (false) requests.
	Stream *bool
}

// Weighted is a fault drawn with probability Rate (0..1). The zero value
// never fires.
type Weighted struct {
	// Step is the fault served when drawn.
	Step Step
	// Rate is the probability of drawing Step, in (0, 1].
	Rate float64
}

// Latency is a delay before answering. Fixed wins; else Min..Max is
// uniform; else Median/P99 describe a log-normal distribution. The zero
// Latency adds no delay.
type Latency struct {
	// Fixed is a constant delay.
	Fixed time.Duration
	// Min and Max bound a uniform delay.
	Min, Max time.Duration
	// Median and P99 shape a log-normal delay (capped at 4×P99).
	Median, P99 time.Duration
}

func (l Latency) zero() bool { return l == Latency{} }

// sample draws a delay using rng (which the caller guards).
func (l Latency) sample(rng *rand.Rand) time.Duration {
	switch {
	case l.Fixed > 0:
		return l.Fixed
	case l.Max > 0:
		if l.Max <= l.Min {
			return l.Min
		}
		return l.Min + time.Duration(rng.Int64N(int64(l.Max-l.Min)))
	case l.Median > 0:
		p99 := max(l.P99, l.Median)
		sigma := math.Log(float64(p99)/float64(l.Median)) / 2.3263
		d := time.Duration(float64(l.Median) * math.Exp(sigma*rng.NormFloat64()))
		return min(d, 4*p99)
	}
	return 0
}

func (m *Match) matches(provider, dialect, model, endpoint string, stream bool) bool {
	if m.Provider != "" && m.Provider != "*" && m.Provider != provider && m.Provider != dialect {
		return false
	}
	switch m.Endpoint {
	case "", "generate":
		if endpoint != endpointGenerate && endpoint != endpointEmbed {
			return false
		}
	case endpointEmbed:
		if endpoint != endpointEmbed {
			return false
		}
	case "models":
		if endpoint != endpointModels {
			return false
		}
	}
	if m.Stream != nil && *m.Stream != stream {
		return false
	}
	if m.Model != "" && m.Model != "*" {
		if ok, _ := path.Match(m.Model, model); !ok {
			return false
		}
	}
	return true
}
