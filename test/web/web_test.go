// Package web runs the dashboard and the error decoder in a real browser:
// Debian's chromium driven by playwright-core (node --test web.test.mjs),
// against llmguard serve on the mock. Install playwright-core from the
// committed lockfile first (cd test/web && npm ci) and chromium with
// apt-get install chromium.
package web

import (
	"bufio"
	"context"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmguard/llmguard/internal/cli"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/web"
)

// need skips the test when a prerequisite is missing, except in CI
// (CI=true), where a missing prerequisite fails it.
func need(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true, so this is a failure; run: apt-get install chromium && cd test/web && npm ci)", what)
	}
	t.Skipf("%s; run: apt-get install chromium && cd test/web && npm ci", what)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const config = `providers:
  openai: {base_url: MOCK/v1, api_key: sk-web-test-0000}
routes:
  default:
    targets: [openai/gpt-4o]
  flaky:
    targets: ["openai/gpt-4o+fault=500"]
    retry: {max_attempts: 1}
    breaker: {failures: 3, min_calls: 3, failure_ratio: 1.0, initial_cooldown: 10m}
`

func TestDashboardAndDecoderInChromium(t *testing.T) {
	node, err := exec.LookPath("node")
	need(t, err == nil, "node is not installed")
	browser := os.Getenv("CHROMIUM")
	if browser == "" {
		browser, err = exec.LookPath("chromium")
		need(t, err == nil, "chromium is not installed")
	}
	_, err = os.Stat(filepath.Join("node_modules", "playwright-core", "package.json"))
	need(t, err == nil, "node_modules/playwright-core is missing")

	m := mock.New(nil)
	ms := httptest.NewServer(m)
	defer ms.Close()
	defer m.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "llmguard.yaml")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(config, "MOCK", ms.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	decoder := filepath.Join(dir, "llmguard-decoder.html")
	if err := os.WriteFile(decoder, web.DecoderPage(), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	stderr := &lockedBuffer{}
	code := make(chan int, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() {
		code <- cli.MainEnv(sctx, []string{"serve", "--addr", "127.0.0.1:0", "--config", cfg},
			&cli.Env{Stdin: strings.NewReader(""), Stdout: pw, Stderr: stderr, Getenv: func(string) string { return "" }})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	u := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(line)
	if err != nil || u == "" {
		t.Fatalf("serve did not say where it listens: %q %v\n%s", line, err, stderr)
	}
	defer func() {
		stop()
		if c := <-code; c != 0 {
			t.Errorf("serve exit code %d\n%s", c, stderr)
		}
	}()

	shots := t.TempDir()
	if d := os.Getenv("LLMGUARD_SHOT_DIR"); d != "" {
		shots = d // keep the screenshots (docs/dashboard.png comes from here)
	}
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=tap", "web.test.mjs")
	cmd.Env = append(os.Environ(), "LLMGUARD_URL="+u, "DECODER_FILE="+decoder, "SHOT_DIR="+shots, "CHROMIUM="+browser, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s\nserve's log:\n%s", err, out, stderr)
	}
	pass := regexp.MustCompile(`(?m)^# pass (\d+)$`).FindSubmatch(out)
	fail := regexp.MustCompile(`(?m)^# fail (\d+)$`).FindSubmatch(out)
	if pass == nil || fail == nil {
		t.Fatalf("no TAP summary in node's output:\n%s", out)
	}
	if n, _ := strconv.Atoi(string(pass[1])); n < 3 || string(fail[1]) != "0" {
		t.Fatalf("browser tests: %s passed, %s failed\n%s", pass[1], fail[1], out)
	}
	for _, l := range regexp.MustCompile(`(?m)screenshot: (\S+)`).FindAllSubmatch(out, -1) {
		t.Logf("screenshot: %s", l[1])
	}
	t.Logf("chromium (%s): %s browser tests passed against %s", browser, pass[1], u)
}
