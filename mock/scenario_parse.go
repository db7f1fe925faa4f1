package mock

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/llmguard/llmguard/classify"
)

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
	var items []any
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		items = x
	default:
		s, ok := scalarString(v)
		if !ok {
			return nil, fmt.Errorf("%s: want a list or a comma-separated string of steps", at)
		}
		for _, p := range strings.Split(s, ",") {
			items = append(items, p)
		}
	}
	steps := make([]Step, 0, len(items))
	for i, e := range items {
		st, err := oneStep(e, fmt.Sprintf("%s[%d]", at, i))
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
