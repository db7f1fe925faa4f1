package mock

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

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
