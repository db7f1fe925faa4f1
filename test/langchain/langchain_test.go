// Package langchain runs LangChain JS chat models (@langchain/openai,
// @langchain/anthropic, @langchain/core; pinned in package-lock.json,
// default retry settings) through the gateway in front of the mock.
// Install them first: cd test/langchain && npm ci.
package langchain

import (
	"testing"
	"time"

	"github.com/llmguard/llmguard/test/harness"
)

var clients = []harness.ContractClient{
	{ID: "lc-openai", Dialect: "openai"},
	{ID: "lc-openai-stream", Dialect: "openai"},
	{ID: "lc-anthropic", Dialect: "anthropic"},
	{ID: "lc-anthropic-stream", Dialect: "anthropic"},
}

// TestLangChain runs the shared client cases (test/harness/contract.mjs).
func TestLangChain(t *testing.T) {
	harness.RunContract(t, ".", 5*time.Minute, clients, "@langchain/openai", "@langchain/anthropic", "@langchain/core")
}
