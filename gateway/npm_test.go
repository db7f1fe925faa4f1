package gateway

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
)

// npmConfig is the gateway's config for the SDK tests: one provider entry
// per 401 test (a bad key opens that key's breaker) and distinct fault
// sequences per SDK file (node runs the files in parallel).
const npmConfig = `
providers:
  anthropic: {base_url: MOCK, api_key: test-ant-key}
  openai: {base_url: MOCK/v1, api_key: test-oai-key}
  badkey-o: {type: openai, base_url: MOCK/v1, api_key: test-bad-key}
  badkey-a: {type: anthropic, base_url: MOCK, api_key: test-bad-key}
routes:
  default:
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
`

// TestNodeSDKs runs the official openai and @anthropic-ai/sdk clients
// (test/gateway-npm, retries off) against the gateway in front of the mock,
// with real time (the retry-after test measures the wait on the mock's log).
// It skips when node or node_modules are missing, except under CI=true.
func TestNodeSDKs(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "test", "gateway-npm"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "openai"))
	}
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@anthropic-ai", "sdk"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node SDK tests cannot run: %v (run: cd test/gateway-npm && npm ci)", err)
		}
		t.Skipf("node SDK tests skipped: %v (run: cd test/gateway-npm && npm ci)", err)
	}

	ms := httptest.NewServer(mock.New(nil))
	defer ms.Close()
	cfg, err := config.Parse("npm.yaml", []byte(strings.ReplaceAll(npmConfig, "MOCK", ms.URL)), nil)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	adapters, err := registry.FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	eng, err := resilience.New(resilience.Options{Config: cfg, Adapters: adapters, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(&Options{Engine: eng, Config: cfg, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(srv.Handler())
	defer gw.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "openai.test.mjs", "anthropic.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GATEWAY_URL="+gw.URL, "MOCK_URL="+ms.URL, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	if testing.Verbose() {
		t.Logf("%s", out)
	}
}
