package mock

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/llmguard/llmguard/classify"
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

// BuiltinNames lists the built-in scenarios.
func BuiltinNames() []string {
	names := make([]string, 0, 12)
	for n := range builtinSources() {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Builtin returns the named built-in scenario (see the package doc).
func Builtin(name string) (*Scenario, bool) {
	src, ok := builtinSources()[name]
	if !ok {
		return nil, false
	}
	sc, err := ParseScenario([]byte(src))
	if err != nil {
		panic("mock: built-in scenario " + name + ": " + err.Error()) // a bug, caught by tests
	}
	return sc, true
}

// LoadScenario returns the built-in scenario called nameOrFile, or reads and
// parses the YAML or JSON file at that path.
func LoadScenario(nameOrFile string) (*Scenario, error) {
	if sc, ok := Builtin(nameOrFile); ok {
		return sc, nil
	}
	data, err := os.ReadFile(nameOrFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("scenario %q: no such built-in (%s) or file", nameOrFile, strings.Join(BuiltinNames(), ", "))
		}
		return nil, fmt.Errorf("scenario: %w", err)
	}
	sc, err := ParseScenario(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", nameOrFile, err)
	}
	if sc.Name == "" {
		sc.Name = nameOrFile
	}
	return sc, nil
}

type rawScenario struct {
	Name        string    `yaml:"name"`
	Description string    `yaml:"description"`
	Seed        uint64    `yaml:"seed"`
	Rules       []rawRule `yaml:"rules"`
}

type rawRule struct {
	Match struct {
		Provider string `yaml:"provider"`
		Model    string `yaml:"model"`
		Endpoint string `yaml:"endpoint"`
		Stream   *bool  `yaml:"stream"`
	} `yaml:"match"`
	Sequence any           `yaml:"sequence"`
	Repeat   bool          `yaml:"repeat"`
	Fault    any           `yaml:"fault"`
	Rate     *float64      `yaml:"rate"`
	Faults   []rawWeighted `yaml:"faults"`
	Latency  *rawLatency   `yaml:"latency"`
	Per      string        `yaml:"per"`
	After    string        `yaml:"after"`
	For      string        `yaml:"for"`
	Every    string        `yaml:"every"`
}

type rawWeighted struct {
	Fault any     `yaml:"fault"`
	Rate  float64 `yaml:"rate"`
}

type rawLatency struct {
	Fixed  string `yaml:"fixed"`
	Min    string `yaml:"min"`
	Max    string `yaml:"max"`
	Median string `yaml:"median"`
	P99    string `yaml:"p99"`
}

// ParseScenario parses a scenario written in YAML (or JSON):
//
//	name: my-scenario
//	seed: 42
//	rules:
//	  - match: {provider: anthropic, model: "claude-*"}
//	    sequence: [529, 529, 200]      # or "529,529,200"
//	  - match: {provider: openai}
//	    fault: "429:2"                  # shorthand for faults: [{fault: "429:2", rate: 0.3}]
//	    rate: 0.3
//	    latency: {median: 80ms, p99: 1s}
//	  - sequence: [server_error]        # an outage: 500s from 10s after start, for 5s,
//	    after: 10s                      # and again every minute
//	    for: 5s
//	    every: 1m
//
// Errors are one line naming the field, e.g.
// "rules[1].sequence[2]: unknown fault "52x" (...)".
func ParseScenario(data []byte) (*Scenario, error) {
	var raw rawScenario
	if err := unmarshal(data, &raw); err != nil {
		return nil, err
	}
	sc := &Scenario{Name: raw.Name, Description: raw.Description, Seed: raw.Seed}
	for i, rr := range raw.Rules {
		at := fmt.Sprintf("rules[%d]", i)
		r := Rule{Repeat: rr.Repeat, Per: rr.Per}
		r.Match = Match{Provider: rr.Match.Provider, Model: rr.Match.Model, Endpoint: rr.Match.Endpoint, Stream: rr.Match.Stream}
		switch r.Match.Endpoint {
		case "", "generate", "models", endpointEmbed, "any":
		default:
			return nil, fmt.Errorf("%s.match.endpoint: %q is not generate, embeddings, models or any", at, r.Match.Endpoint)
		}
		if r.Match.Model != "" {
			if _, err := path.Match(r.Match.Model, ""); err != nil {
				return nil, fmt.Errorf("%s.match.model: bad glob %q", at, r.Match.Model)
			}
		}
		switch r.Per {
		case "", "provider", "model", "rule":
		default:
			return nil, fmt.Errorf("%s.per: %q is not provider, model or rule", at, r.Per)
		}
		seq, err := stepList(rr.Sequence, at+".sequence")
		if err != nil {
			return nil, err
		}
		r.Sequence = seq
		if rr.Fault != nil {
			if rr.Rate == nil {
				return nil, fmt.Errorf("%s.rate: required with fault (0..1)", at)
			}
			rr.Faults = append([]rawWeighted{{Fault: rr.Fault, Rate: *rr.Rate}}, rr.Faults...)
		} else if rr.Rate != nil {
			return nil, fmt.Errorf("%s.fault: required with rate", at)
		}
		total := 0.0
		for j, w := range rr.Faults {
			wat := fmt.Sprintf("%s.faults[%d]", at, j)
			if rr.Fault != nil {
				wat = at + ".fault"
				if j > 0 {
					wat = fmt.Sprintf("%s.faults[%d]", at, j-1)
				}
			}
			st, err := oneStep(w.Fault, wat+".fault")
			if err != nil {
				return nil, err
			}
			if w.Rate <= 0 || w.Rate > 1 {
				return nil, fmt.Errorf("%s.rate: %v is not in (0, 1]", wat, w.Rate)
			}
			total += w.Rate
			r.Faults = append(r.Faults, Weighted{Step: st, Rate: w.Rate})
		}
		if total > 1+1e-9 {
			return nil, fmt.Errorf("%s.faults: rates add up to %v, more than 1", at, total)
		}
		if rr.Latency != nil {
			if r.Latency, err = parseLatency(rr.Latency, at+".latency"); err != nil {
				return nil, err
			}
		}
		if err := parseSpan(&r, &rr, at); err != nil {
			return nil, err
		}
		if len(r.Sequence) == 0 && len(r.Faults) == 0 && r.Latency.zero() {
			return nil, fmt.Errorf("%s: needs a sequence, fault/rate, faults or latency", at)
		}
		sc.Rules = append(sc.Rules, r)
	}
	return sc, nil
}

// parseSpan reads a rule's after, for and every.
func parseSpan(r *Rule, rr *rawRule, at string) error {
	for _, f := range []struct {
		name, src string
		dst       *time.Duration
	}{{"after", rr.After, &r.After}, {"for", rr.For, &r.For}, {"every", rr.Every, &r.Every}} {
		if f.src == "" {
			continue
		}
		d, err := time.ParseDuration(f.src)
		if err != nil || d < 0 {
			return fmt.Errorf("%s.%s: %q is not a duration such as 5s", at, f.name, f.src)
		}
		*f.dst = d
	}
	if r.Every > 0 && (r.For == 0 || r.After+r.For > r.Every) {
		return fmt.Errorf("%s.every: %v must be at least after+for (%v), and for must be set", at, r.Every, r.After+r.For)
	}
	return nil
}

func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int, int64, uint64, int32, uint32, uint, float64:
		return fmt.Sprint(x), true
	}
	return "", false
}

func oneStep(v any, at string) (Step, error) {
	s, ok := scalarString(v)
	if !ok {
		return Step{}, fmt.Errorf("%s: want a step such as 529 or \"429:2\"", at)
	}
	st, err := ParseStep(s)
	if err != nil {
		return Step{}, fmt.Errorf("%s: %w", at, err)
	}
	return st, nil
}

func stepList(v any, at string) ([]Step, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		steps := make([]Step, 0, len(x))
		for i, e := range x {
			st, err := oneStep(e, fmt.Sprintf("%s[%d]", at, i))
			if err != nil {
				return nil, err
			}
			steps = append(steps, st)
		}
		return steps, nil
	}
	s, ok := scalarString(v)
	if !ok {
		return nil, fmt.Errorf("%s: want a list or a comma-separated string of steps", at)
	}
	parts := strings.Split(s, ",")
	steps := make([]Step, 0, len(parts))
	for i, p := range parts {
		st, err := oneStep(p, fmt.Sprintf("%s[%d]", at, i))
		if err != nil {
			return nil, err
		}
		steps = append(steps, st)
	}
	return steps, nil
}

func parseLatency(r *rawLatency, at string) (Latency, error) {
	var l Latency
	fields := []struct {
		name string
		src  string
		dst  *time.Duration
	}{{"fixed", r.Fixed, &l.Fixed}, {"min", r.Min, &l.Min}, {"max", r.Max, &l.Max}, {"median", r.Median, &l.Median}, {"p99", r.P99, &l.P99}}
	for _, f := range fields {
		if f.src == "" {
			continue
		}
		d, err := time.ParseDuration(f.src)
		if err != nil || d < 0 {
			return l, fmt.Errorf("%s.%s: %q is not a duration such as 250ms", at, f.name, f.src)
		}
		*f.dst = d
	}
	switch {
	case l.Max > 0 && l.Max < l.Min:
		return l, fmt.Errorf("%s.max: %v is less than min %v", at, l.Max, l.Min)
	case l.P99 > 0 && l.Median == 0:
		return l, fmt.Errorf("%s.median: required with p99", at)
	case l.P99 > 0 && l.P99 < l.Median:
		return l, fmt.Errorf("%s.p99: %v is less than median %v", at, l.P99, l.Median)
	case l.Min > 0 && l.Max == 0:
		return l, fmt.Errorf("%s.max: required with min", at)
	}
	return l, nil
}

// builtinSources holds the built-in scenarios in the file format.
func builtinSources() map[string]string {
	return map[string]string{
		"healthy": `name: healthy
description: Every request succeeds.
`,
		"overload-burst": `name: overload-burst
description: Each provider answers its first 3 generation requests with its overload error (Anthropic 529 overloaded_error, OpenAI 503, Gemini 503 UNAVAILABLE), then succeeds.
rules:
  - sequence: [overloaded, overloaded, overloaded, ok]
`,
		"rate-limited": `name: rate-limited
description: 30% of generation requests get the provider's 429 rate-limit error with retry-after 2 (seeded).
seed: 1
rules:
  - fault: "rate_limit:2"
    rate: 0.3
`,
		"quota-empty": `name: quota-empty
description: The account is out of money - OpenAI 429 insufficient_quota, Anthropic 400 "credit balance is too low", Gemini 429 with "limit 0" - on every generation request.
rules:
  - sequence: [insufficient_quota]
`,
		"bad-key": `name: bad-key
description: Every request, model listing included, is refused with the provider's invalid-key error (Anthropic/OpenAI/Azure 401, Gemini 400 API_KEY_INVALID).
rules:
  - match: {endpoint: any}
    sequence: [bad_key]
`,
		"flaky-network": `name: flaky-network
description: 10% connection resets, 10% Cloudflare HTML 502 pages and 10% truncated bodies, with log-normal latency (median 20ms, p99 200ms); seeded.
seed: 1
rules:
  - faults:
      - {fault: reset, rate: 0.1}
      - {fault: html_502, rate: 0.1}
      - {fault: truncated, rate: 0.1}
    latency: {median: 20ms, p99: 200ms}
`,
		"gemini-daily-quota": `name: gemini-daily-quota
description: Gemini answers every generation request with 429 RESOURCE_EXHAUSTED for the per-day quota (QuotaFailure GenerateRequestsPerDayPerProjectPerModel-FreeTier, RetryInfo 36s); other providers are healthy.
rules:
  - match: {provider: gemini}
    sequence: [daily_quota]
`,
		"midstream-error": `name: midstream-error
description: Every streaming request fails after 3 tokens with the provider's in-stream error (Anthropic event error overloaded_error, OpenAI error chunk, Gemini error object); non-streaming requests succeed.
rules:
  - match: {stream: true}
    sequence: ["midstream:3"]
`,
		"brief-outage": `name: brief-outage
description: Healthy for 1s, then every generation request gets the provider's 500 server error for 3s, then healthy again; the cycle repeats every 30s (an outage shorter than a route's deadline).
rules:
  - sequence: [server_error]
    after: 1s
    for: 3s
    every: 30s
`,
		"mixed": `name: mixed
description: Three providers failing at once, each its own way (seeded) - Anthropic 15% 429 with retry-after 1 and 15% 529 overloaded, OpenAI 10% connection resets and 10% HTML 502 pages, Gemini out of daily quota; other providers are healthy.
seed: 1
rules:
  - match: {provider: anthropic}
    faults:
      - {fault: "rate_limit:1", rate: 0.15}
      - {fault: overloaded, rate: 0.15}
  - match: {provider: openai}
    faults:
      - {fault: reset, rate: 0.1}
      - {fault: html_502, rate: 0.1}
  - match: {provider: gemini}
    sequence: [daily_quota]
`,
		"outage": `name: outage
description: Every generation request gets the provider's 500 server error.
rules:
  - sequence: [server_error]
`,
		"slow": `name: slow
description: Every generation request succeeds after a fixed 1.5s delay (for timeout and hedging tests).
rules:
  - latency: {fixed: 1500ms}
`,
	}
}

// unmarshal decodes a scenario file strictly, turning a panic inside
// goccy/go-yaml (v1.19.2 dereferences nil on "rules: !", a non-specific tag
// where a list is expected) into a one-line error.
func unmarshal(data []byte, raw *rawScenario) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("scenario: malformed YAML: a value has a shape or tag a scenario cannot take (check tags like '!' and nesting)")
		}
	}()
	if err := yaml.UnmarshalWithOptions(data, raw, yaml.DisallowUnknownField()); err != nil {
		// The first line of goccy's message is the error; the rest quotes the source.
		head, _, _ := strings.Cut(strings.TrimSpace(yaml.FormatError(err, false, false)), "\n")
		return errors.New("scenario: " + classify.Line(head))
	}
	return nil
}
