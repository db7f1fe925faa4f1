package mock

import (
	"fmt"
	"strconv"
	"time"
)

// This file: which step a request gets (the fault spec it names, else the
// first active scenario rule that matches it, in that rule's order).

// choose picks the step for a request: the fault spec (header or model
// marker) wins over the scenario's rules.
func (s *Server) choose(rt *route, model, spec string, stream bool) (Step, error) {
	if spec != "" {
		steps, err := ParseSteps(spec)
		if err != nil {
			return Step{}, fmt.Errorf("%w: %v", errBadFaultSpec, err)
		}
		key := "spec|" + rt.provider + "|" + spec
		s.mu.Lock()
		i := s.counters[key]
		s.counters[key] = i + 1
		s.mu.Unlock()
		return steps[min(i, len(steps)-1)], nil
	}
	var elapsed time.Duration
	timed := false
	for ri := range s.sc.Rules {
		rule := &s.sc.Rules[ri]
		if !rule.Match.matches(rt.provider, rt.dialect, model, rt.endpoint, stream) {
			continue
		}
		if rule.After > 0 || rule.For > 0 {
			if !timed {
				now := s.now()
				s.mu.Lock()
				elapsed = now.Sub(s.start)
				s.mu.Unlock()
				timed = true
			}
			if !rule.active(elapsed) {
				continue
			}
		}
		return s.next(ri, rule, rt.provider, model), nil
	}
	return Step{}, nil
}

func (s *Server) next(ri int, rule *Rule, provider, model string) Step {
	key := strconv.Itoa(ri)
	switch rule.Per {
	case "", "provider":
		key += "|" + provider
	case "model":
		key += "|" + provider + "|" + model
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.counters[key]
	s.counters[key] = i + 1
	var st Step
	switch n := len(rule.Sequence); {
	case i < n:
		st = rule.Sequence[i]
	case n > 0 && rule.Repeat:
		st = rule.Sequence[i%n]
	case len(rule.Faults) > 0:
		u := s.rng.Float64()
		for _, f := range rule.Faults {
			if u < f.Rate {
				st = f.Step
				break
			}
			u -= f.Rate
		}
	case n > 0:
		st = rule.Sequence[n-1]
	}
	if st.Latency == 0 && !rule.Latency.zero() {
		st.Latency = rule.Latency.sample(s.rng)
	}
	return st
}
