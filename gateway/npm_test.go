package gateway_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/llmguard/llmguard/test/harness"
)

// npmProviders and npmRoutes are the gateway config of the SDK tests in
// test/gateway-npm beside the shared client cases (harness.ContractConfig):
// one provider entry per 401 test (a bad key opens that key's breaker) and
// distinct fault sequences per SDK file (node runs the files in parallel).
const npmProviders = `  badkey-o: {type: openai, base_url: MOCK/v1, api_key: test-bad-key}
  badkey-a: {type: anthropic, base_url: MOCK, api_key: test-bad-key}
`

const npmRoutes = `  default:
    targets: [anthropic/claude-sonnet-4-5]
  oai:
    targets: [openai/gpt-4o]
  ant:
    targets: [anthropic/claude-sonnet-4-5]
  oai-overloaded:
    targets: [openai/gpt-4o+fault=503, anthropic/claude-sonnet-4-5]
    retry: {max_attempts: 1}
  ant-overloaded:
    targets: [anthropic/claude-sonnet-4-5+fault=529, openai/gpt-4o]
    retry: {max_attempts: 1}
  oai-retry:
    targets: ["openai/gpt-4o-retry+fault=429:1,200"]
  ant-retry:
    targets: ["anthropic/claude-sonnet-4-5-retry+fault=429:1,200"]
  oai-bad-key:
    targets: [badkey-o/gpt-4o+fault=401]
  ant-bad-key:
    targets: [badkey-a/claude-sonnet-4-5+fault=401]
  oai-midstream:
    targets: [openai/gpt-4o+fault=midstream:3]
  ant-midstream:
    targets: [anthropic/claude-sonnet-4-5+fault=midstream:3]
  oai-embed:
    targets: ["openai/text-embedding-3-small+fault=503,200"]
  slow:
    targets: ["openai/gpt-4o-slow+fault=long:40"]
`

// npmClients are the clients of contract.test.mjs.
var npmClients = []harness.ContractClient{
	{ID: "openai-chat", Dialect: "openai"},
	{ID: "openai-chat-stream", Dialect: "openai"},
	{ID: "openai-responses", Dialect: "openai"},
	{ID: "openai-responses-stream", Dialect: "openai"},
	{ID: "anthropic", Dialect: "anthropic"},
	{ID: "anthropic-stream", Dialect: "anthropic"},
}

// npmFiles are the node test files, run in parallel.
var npmFiles = []string{"openai.test.mjs", "anthropic.test.mjs", "contract.test.mjs", "responses.test.mjs", "long.test.mjs"}

// TestNodeSDKs runs the official openai and @anthropic-ai/sdk clients
// (test/gateway-npm, pinned in its lockfile, default retry settings) against
// the gateway in process in front of the mock, with real time (the
// retry-after test measures the wait on the mock's log). It skips when node
// or node_modules are missing, except under CI=true.
func TestNodeSDKs(t *testing.T) {
	dir := filepath.Join("..", "test", "gateway-npm")
	node := harness.Node(t, dir, "openai", "@anthropic-ai/sdk")
	st := harness.ContractGateway(t, npmProviders, npmRoutes, npmClients...)
	out := harness.RunNode(t, node, dir, 4*time.Minute, st.Env(), npmFiles...)
	if testing.Verbose() {
		t.Logf("%s", out)
	}
}
