// Package npm runs the official openai and @anthropic-ai/sdk npm clients
// (node --test mock.test.mjs) against llmguard's mock. Install the clients
// from the committed lockfile first: cd test/npm && npm ci.
package npm

import (
	"testing"
	"time"

	"github.com/llmguard/llmguard/test/harness"
)

func TestOfficialSDKsAgainstMock(t *testing.T) {
	node := harness.Node(t, ".", "openai", "@anthropic-ai/sdk")
	srv, url := harness.StartMock(t, nil)
	out := harness.RunNode(t, node, ".", 2*time.Minute, []string{"MOCK_URL=" + url}, "mock.test.mjs")
	if n := harness.Passed(out); n < 10 {
		t.Fatalf("node tests: %d passed, want at least 10\n%s", n, out)
	}
	// 7 generation requests per SDK, 2 Azure, 2 model listings; more would
	// mean an SDK retried.
	if n := len(srv.Requests()); n != 18 {
		t.Errorf("the mock saw %d requests, want 18 (one per SDK call, no retries)", n)
	}
}
