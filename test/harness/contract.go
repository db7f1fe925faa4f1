package harness

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmguard/llmguard/mock"
)

// ContractClient is one client of the shared cases in contract.mjs.
type ContractClient struct {
	// ID names the client in route and upstream model names ("openai-chat").
	ID string
	// Dialect is the API it speaks: "openai" or "anthropic". Its routes'
	// primary targets are on the provider of that dialect.
	Dialect string
}

// ContractConfig returns the gateway configuration (with MOCK for the
// mock's URL, see ParseConfig) holding, for each client, the routes that
// contract.mjs calls, every policy at its default; ContractScenario gives
// the mock their faults:
//
//	ID-healthy      one target
//	ID-burst        an Anthropic target answering 529, 529, then 200
//	ID-invalid      a target answering 400 invalid_request, then a healthy fallback
//	ID-badkey       a target on a provider of its own answering 401
//	ID-overloaded   an Anthropic target answering 529 for ever
//	ID-ratelimited  a target answering 429 with retry-after 1 for ever
//
// Upstream models are named MODEL--ID--CASE, so each case has its own fault
// sequence, breaker and log entries. providers and routes are more entries
// of those sections, in YAML indented by two spaces.
func ContractConfig(providers, routes string, clients ...ContractClient) string {
	var b strings.Builder
	b.WriteString("providers:\n")
	b.WriteString("  anthropic: {base_url: MOCK, api_key: sk-ant-upstream-test}\n")
	b.WriteString("  openai: {base_url: MOCK/v1, api_key: sk-oai-upstream-test}\n")
	for _, c := range clients {
		p, _, _, _ := dialectTargets(c.Dialect)
		base := "MOCK"
		if p == "openai" {
			base = "MOCK/v1"
		}
		fmt.Fprintf(&b, "  bad-%s: {type: %s, base_url: %s, api_key: sk-bad-%s-0000}\n", c.ID, p, base, c.ID)
	}
	b.WriteString(providers)
	b.WriteString("routes:\n")
	for _, c := range clients {
		p, m, q, n := dialectTargets(c.Dialect)
		id := c.ID
		route := func(kase string, targets ...string) {
			fmt.Fprintf(&b, "  %s-%s:\n    targets: [", id, kase)
			for i, tg := range targets {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%q", tg)
			}
			b.WriteString("]\n")
		}
		route("healthy", fmt.Sprintf("%s/%s--%s--healthy", p, m, id))
		route("burst", fmt.Sprintf("anthropic/claude-sonnet-4-5--%s--burst", id))
		route("invalid", fmt.Sprintf("%s/%s--%s--invalid", p, m, id), fmt.Sprintf("%s/%s--%s--invalid-fallback", q, n, id))
		route("badkey", fmt.Sprintf("bad-%s/%s--%s--badkey", id, m, id))
		route("overloaded", fmt.Sprintf("anthropic/claude-sonnet-4-5--%s--overloaded", id))
		route("ratelimited", fmt.Sprintf("%s/%s--%s--ratelimited", p, m, id))
	}
	b.WriteString(routes)
	return b.String()
}

// contractScenario answers the contract's upstream models (by the case at
// the end of their name), each model with its own sequence.
const contractScenario = `name: contract
description: the faults of the shared client cases (test/harness/contract.mjs)
rules:
  - {match: {model: "*--burst"}, per: model, sequence: [529, 529, 200]}
  - {match: {model: "*--invalid"}, per: model, sequence: [invalid_request]}
  - {match: {model: "*--badkey"}, per: model, sequence: [bad_key]}
  - {match: {model: "*--overloaded"}, per: model, sequence: [overloaded]}
  - {match: {model: "*--ratelimited"}, per: model, sequence: ["rate_limit:1"]}
`

// ContractScenario is the mock scenario of ContractConfig's routes.
func ContractScenario(t testing.TB) *mock.Scenario {
	t.Helper()
	sc, err := mock.ParseScenario([]byte(contractScenario))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// dialectTargets returns the native provider and model of a dialect, and
// the other ones.
func dialectTargets(dialect string) (p, m, q, n string) {
	if dialect == "anthropic" {
		return "anthropic", "claude-sonnet-4-5", "openai", "gpt-4o"
	}
	return "openai", "gpt-4o", "anthropic", "claude-sonnet-4-5"
}

// ContractGateway starts the mock with ContractScenario and the gateway in
// process over ContractConfig(providers, routes, clients...).
func ContractGateway(t testing.TB, providers, routes string, clients ...ContractClient) *Stack {
	t.Helper()
	return Gateway(t, ContractConfig(providers, routes, clients...), &mock.Config{Scenario: ContractScenario(t)})
}

// RunContract runs the shared client cases (contract.test.mjs in dir, whose
// node_modules hold pkgs) for clients against ContractGateway, within
// timeout, and returns node's output (RunNode's).
func RunContract(t testing.TB, dir string, timeout time.Duration, clients []ContractClient, pkgs ...string) string {
	t.Helper()
	node := Node(t, dir, pkgs...)
	st := ContractGateway(t, "", "", clients...)
	return RunNode(t, node, dir, timeout, st.Env(), "contract.test.mjs")
}
