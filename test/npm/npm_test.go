// Package npm runs the official openai and @anthropic-ai/sdk npm clients
// (node --test mock.test.mjs) against llmguard's mock. Install the clients
// from the committed lockfile first: cd test/npm && npm ci.
package npm

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/llmguard/llmguard/mock"
)

// need skips the test when a prerequisite is missing, except in CI
// (CI=true), where a missing prerequisite fails it.
func need(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true, so this is a failure; run: cd test/npm && npm ci)", what)
	}
	t.Skipf("%s; run: cd test/npm && npm ci", what)
}

func TestOfficialSDKsAgainstMock(t *testing.T) {
	node, err := exec.LookPath("node")
	need(t, err == nil, "node is not installed")
	for _, pkg := range []string{"openai", filepath.Join("@anthropic-ai", "sdk")} {
		_, err := os.Stat(filepath.Join("node_modules", pkg, "package.json"))
		need(t, err == nil, "node_modules/"+filepath.ToSlash(pkg)+" is missing")
	}

	srv := mock.New(nil)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=tap", "mock.test.mjs")
	cmd.Env = append(os.Environ(), "MOCK_URL="+ts.URL, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	pass := regexp.MustCompile(`(?m)^# pass (\d+)$`).FindSubmatch(out)
	fail := regexp.MustCompile(`(?m)^# fail (\d+)$`).FindSubmatch(out)
	if pass == nil || fail == nil {
		t.Fatalf("no TAP summary in node's output:\n%s", out)
	}
	if n, _ := strconv.Atoi(string(pass[1])); n < 10 || string(fail[1]) != "0" {
		t.Fatalf("node tests: %s passed, %s failed\n%s", pass[1], fail[1], out)
	}
	t.Logf("node --test: %s passed against %s", pass[1], ts.URL)
	// 7 generation requests per SDK, 2 Azure, 2 model listings; more would
	// mean an SDK retried.
	if n := len(srv.Requests()); n != 18 {
		t.Errorf("the mock saw %d requests, want 18 (one per SDK call, no retries)", n)
	}
}
