// Package aisdk runs the Vercel AI SDK (ai, @ai-sdk/openai, @ai-sdk/anthropic;
// pinned in package-lock.json, default retry settings) through the gateway
// in front of the mock. Install it first: cd test/ai-sdk && npm ci.
package aisdk

import (
	"testing"
	"time"

	"github.com/llmguard/llmguard/test/harness"
)

var clients = []harness.ContractClient{
	{ID: "ai-openai", Dialect: "openai"},
	{ID: "ai-openai-stream", Dialect: "openai"},
	{ID: "ai-openai-chat", Dialect: "openai"},
	{ID: "ai-openai-chat-stream", Dialect: "openai"},
	{ID: "ai-anthropic", Dialect: "anthropic"},
	{ID: "ai-anthropic-stream", Dialect: "anthropic"},
}

// TestAISDK runs the shared client cases (test/harness/contract.mjs).
func TestAISDK(t *testing.T) {
	harness.RunContract(t, ".", 4*time.Minute, clients, "ai", "@ai-sdk/openai", "@ai-sdk/anthropic")
}

// multiTurnConfig has one route per translated provider family that the
// multi-turn cases (multiturn.test.mjs) call through the Responses API.
const multiTurnConfig = `providers:
  anthropic: {base_url: MOCK, api_key: sk-ant-upstream-test}
  gemini: {base_url: MOCK, api_key: AIzaUpstreamTest}
routes:
  turns-anthropic: {targets: [anthropic/claude-sonnet-4-5]}
  turns-gemini: {targets: [gemini/gemini-2.5-flash]}
`

// TestAISDKMultiTurn runs multi-turn conversations (item_reference to the
// gateway's own earlier answers, a tool loop) with the default provider on
// Anthropic and Gemini routes.
func TestAISDKMultiTurn(t *testing.T) {
	node := harness.Node(t, ".", "ai", "@ai-sdk/openai")
	st := harness.Gateway(t, multiTurnConfig, nil)
	harness.RunNode(t, node, ".", 2*time.Minute, st.Env(), "multiturn.test.mjs")
}
