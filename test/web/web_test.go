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
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmguard/llmguard/internal/cli"
	"github.com/llmguard/llmguard/test/harness"
	"github.com/llmguard/llmguard/web"
)

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
	const fix = "run: apt-get install chromium && cd test/web && npm ci"
	node, err := exec.LookPath("node")
	harness.Need(t, err == nil, "node is not installed", fix)
	browser := os.Getenv("CHROMIUM")
	if browser == "" {
		browser, err = exec.LookPath("chromium")
		harness.Need(t, err == nil, "chromium is not installed", fix)
	}
	_, err = os.Stat(filepath.Join("node_modules", "playwright-core", "package.json"))
	harness.Need(t, err == nil, "node_modules/playwright-core is missing", fix)

	_, murl := harness.StartMock(t, nil)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "llmguard.yaml")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(config, "MOCK", murl)), 0o600); err != nil {
		t.Fatal(err)
	}
	decoder := filepath.Join(dir, "llmguard-decoder.html")
	if err := os.WriteFile(decoder, web.DecoderPage(), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	stderr := &harness.SyncBuffer{}
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
	defer func() {
		if t.Failed() {
			t.Logf("serve's log:\n%s", stderr)
		}
	}()

	shots := t.TempDir()
	if d := os.Getenv("LLMGUARD_SHOT_DIR"); d != "" {
		shots = d // keep the screenshots (docs/dashboard.png comes from here)
	}
	out := harness.RunNode(t, node, ".", 3*time.Minute, []string{"LLMGUARD_URL=" + u, "DECODER_FILE=" + decoder, "SHOT_DIR=" + shots, "CHROMIUM=" + browser}, "web.test.mjs")
	if n := harness.Passed(out); n < 3 {
		t.Fatalf("browser tests: %d passed, want at least 3\n%s", n, out)
	}
	for _, l := range regexp.MustCompile(`(?m)screenshot: (\S+)`).FindAllStringSubmatch(out, -1) {
		t.Logf("screenshot: %s", l[1])
	}
	t.Logf("chromium (%s): %d browser tests passed against %s", browser, harness.Passed(out), u)
}
