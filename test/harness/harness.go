// Package harness starts what the real-client tests under test/ need, all on
// 127.0.0.1: llmguard's mock, the gateway in front of it (in process, or the
// built `llmguard serve`), and node's test runner over a harness folder whose
// npm packages come from its committed lockfile.
//
// A missing prerequisite (node, node_modules, a built client) skips the test
// with the command that installs it, except under CI=true, where it fails:
//
//	node := harness.Node(t, ".", "openai")
//	st := harness.Gateway(t, harness.ReadConfig(t, "gateway.yaml"), nil)
//	harness.RunNode(t, node, ".", st.Env(), "openai.test.mjs")
//
// Nothing here is safe for use by concurrent tests except where it says so.
package harness

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/gateway"
	"github.com/llmguard/llmguard/internal/syncbuf"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
)

// Need skips the test when ok is false, saying what is missing and how to
// install it (fix); under CI=true it fails instead, since CI installs every
// prerequisite itself.
func Need(t testing.TB, ok bool, what, fix string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true, so this is a failure; %s)", what, fix)
	}
	t.Skipf("%s; %s", what, fix)
}

// Node returns the node binary after checking that dir/node_modules holds
// each of pkgs (names as in package.json, "@scope/name" included).
func Node(t testing.TB, dir string, pkgs ...string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	fix := "run: cd " + relToRepo(abs) + " && npm ci"
	node, err := exec.LookPath("node")
	Need(t, err == nil, "node is not installed", fix)
	for _, p := range pkgs {
		_, err := os.Stat(filepath.Join(abs, "node_modules", filepath.FromSlash(p), "package.json"))
		Need(t, err == nil, "node_modules/"+p+" is missing", fix)
	}
	return node
}

// relToRepo names dir relative to the repository root for messages.
func relToRepo(dir string) string {
	if i := strings.LastIndex(dir, string(filepath.Separator)+"test"+string(filepath.Separator)); i >= 0 {
		return filepath.ToSlash(dir[i+1:])
	}
	return dir
}

// Stack is a mock and a gateway in front of it, both on 127.0.0.1, closed
// when the test ends.
type Stack struct {
	// Mock is the fault-injecting upstream; Mock.Requests() is its log.
	Mock *mock.Server
	// MockURL and URL are the base URLs of the mock and of the gateway.
	MockURL, URL string
}

// Env is the environment node harnesses read: GATEWAY_URL and MOCK_URL.
func (s *Stack) Env() []string {
	return []string{"GATEWAY_URL=" + s.URL, "MOCK_URL=" + s.MockURL}
}

// Upstream returns the mock's log entries for model (every entry when
// model is ""), generation requests only.
func (s *Stack) Upstream(model string) []mock.Request {
	var out []mock.Request
	for _, r := range s.Mock.Requests() {
		if r.Endpoint == "generate" && (model == "" || r.Model == model) {
			out = append(out, r)
		}
	}
	return out
}

// StartMock runs the mock in process under httptest (cfg nil: healthy).
func StartMock(t testing.TB, cfg *mock.Config) (*mock.Server, string) {
	t.Helper()
	m := mock.New(cfg)
	ts := httptest.NewServer(m)
	t.Cleanup(func() { m.Close(); ts.Close() })
	return m, ts.URL
}

// ParseConfig parses a gateway configuration in which every "MOCK" stands
// for the mock's base URL.
func ParseConfig(t testing.TB, yaml, mockURL string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("gateway.yaml", []byte(strings.ReplaceAll(yaml, "MOCK", mockURL)), nil)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Fatalf("gateway config: %v", err)
	}
	return cfg
}

// ReadConfig reads a gateway configuration file of the harness.
func ReadConfig(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Gateway starts the mock (mc nil: healthy) and the gateway in process over
// the configuration yaml (see ParseConfig), with the gateway's defaults for
// everything yaml leaves out.
func Gateway(t testing.TB, yaml string, mc *mock.Config) *Stack {
	t.Helper()
	m, murl := StartMock(t, mc)
	return &Stack{Mock: m, MockURL: murl, URL: ServeGateway(t, ParseConfig(t, yaml, murl))}
}

// ServeGateway runs the gateway cfg describes (adapters, a quiet engine and
// the gateway on it) under httptest and returns its URL.
func ServeGateway(t testing.TB, cfg *config.Config) string {
	t.Helper()
	adapters, err := registry.Build(cfg.ProviderSettings(), nil)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	eo := cfg.EngineOptions()
	eo.Adapters, eo.Logger = adapters, quiet
	eng, err := resilience.New(eo)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := gateway.New(&gateway.Options{Engine: eng, Catalog: cfg.Catalog(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	return gw.URL
}

// Served is a running `llmguard serve`.
type Served struct {
	// URL is its base URL.
	URL string
	// Log holds what it wrote to stderr so far (safe for concurrent use).
	Log *SyncBuffer
}

// Serve runs the built binary's `serve` on 127.0.0.1:0 (a port the kernel
// picks, read back from its "listening on" line) with the configuration
// yaml (written to a file; "MOCK" replaced by mockURL) and the extra
// environment variables env, and waits until /healthz answers. The process
// gets SIGTERM when the test ends.
func Serve(t testing.TB, bin, yaml, mockURL string, env ...string) *Served {
	t.Helper()
	ParseConfig(t, yaml, mockURL) // a bad config fails here, with its message
	path := filepath.Join(t.TempDir(), "llmguard.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(yaml, "MOCK", mockURL)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--config", path)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	log := &SyncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	var url string
	for deadline := time.Now().Add(15 * time.Second); ; {
		if url == "" {
			if m := listening.FindStringSubmatch(log.String()); m != nil {
				url = m[1]
			}
		}
		var err error
		if url != "" {
			var resp *http.Response
			if resp, err = http.Get(url + "/healthz"); err == nil {
				resp.Body.Close()
				return &Served{URL: url, Log: log}
			}
		}
		select {
		case <-done:
			t.Fatalf("llmguard serve exited: %s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("llmguard serve did not answer /healthz at %q: %v\n%s", url, err, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listening finds the base URL in serve's "listening on" line.
var listening = regexp.MustCompile(`llmguard serve listening on (http://127\.0\.0\.1:\d+)`)

// SyncBuffer is a bytes.Buffer safe for concurrent use.
type SyncBuffer = syncbuf.Buffer

var (
	tapPass     = regexp.MustCompile(`(?m)^# pass (\d+)$`)
	tapFail     = regexp.MustCompile(`(?m)^# fail (\d+)$`)
	tapAttempts = regexp.MustCompile(`(?m)^\s*# (attempts .*)$`)
)

// RunNode runs `node --test` on files in dir (all at once, one process per
// file) with env added to the environment, and fails the test when a node
// test failed or none ran; it logs the contract's "attempts" diagnostics.
// It returns node's TAP output. NODE_TEST_FILES
// (space-separated) runs other files instead.
func RunNode(t testing.TB, node, dir string, timeout time.Duration, env []string, files ...string) string {
	t.Helper()
	if f := strings.Fields(os.Getenv("NODE_TEST_FILES")); len(f) > 0 {
		files = f
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append([]string{"--test", "--test-reporter=tap", "--test-concurrency=" + strconv.Itoa(len(files))}, files...)
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1"), env...)
	// node --test runs each file in a child process: end them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("node --test did not finish within %v:\n%s", timeout, out)
	}
	for _, m := range tapAttempts.FindAllSubmatch(out, -1) {
		t.Logf("%s", m[1])
	}
	pass, fail := tapPass.FindSubmatch(out), tapFail.FindSubmatch(out)
	if pass == nil || fail == nil {
		t.Fatalf("no TAP summary in node's output (%v):\n%s", err, out)
	}
	if err != nil || string(fail[1]) != "0" {
		t.Fatalf("node --test: %s passed, %s failed (%v)\n%s", pass[1], fail[1], err, out)
	}
	if string(pass[1]) == "0" {
		t.Fatalf("node --test ran no test:\n%s", out)
	}
	t.Logf("node --test %s: %s passed", strings.Join(files, " "), pass[1])
	return string(out)
}

// Passed is how many node tests passed by the TAP output out (RunNode's),
// 0 when it has no summary.
func Passed(out string) int {
	m := tapPass.FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
