// Package claudecode runs Claude Code (@anthropic-ai/claude-code, headless
// `claude -p --output-format json`, pinned in package-lock.json) against
// llmguard. Install it first: cd test/claude-code && npm ci.
//
// Claude Code runs with HOME in a temporary directory, a dummy key, its
// non-essential traffic off, and every proxy variable pointing at a
// recorder on 127.0.0.1 that refuses (and reports) any request for another
// host, so the only address it can reach is the one under test.
package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmguard/llmguard/test/harness"
)

// claudeBinary returns the installed `claude` after checking that it runs.
func claudeBinary(t *testing.T) (path, version string) {
	t.Helper()
	fix := "run: cd test/claude-code && npm ci"
	path, err := filepath.Abs(filepath.Join("node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = os.Stat(path)
	harness.Need(t, err == nil, "node_modules/.bin/claude is missing", fix)
	out, err := exec.Command(path, "--version").CombinedOutput()
	harness.Need(t, err == nil && strings.Contains(string(out), "Claude Code"),
		"claude --version failed ("+strings.TrimSpace(string(out))+"): the native binary was not installed", fix)
	return path, strings.Fields(string(out))[0]
}

// exchange is one request that Claude Code sent, and the status it got.
type exchange struct {
	Method, URI string
	Header      http.Header
	Body        []byte
	Status      int
}

// recorder is a reverse proxy on 127.0.0.1 in front of the address under
// test that records every exchange; as Claude Code's HTTP(S) proxy it
// refuses every request for another host and records it in outside.
type recorder struct {
	URL     string
	mu      sync.Mutex
	ex      []exchange
	outside []string
}

func newRecorder(t *testing.T, upstream string) *recorder {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		FlushInterval: -1,
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect || r.URL.IsAbs() {
			rec.mu.Lock()
			rec.outside = append(rec.outside, r.Method+" "+r.Host+r.URL.Path)
			rec.mu.Unlock()
			http.Error(w, "llmguard test: no network beyond 127.0.0.1", http.StatusForbidden)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		rp.ServeHTTP(sw, r)
		rec.mu.Lock()
		rec.ex = append(rec.ex, exchange{Method: r.Method, URI: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body, Status: sw.status})
		rec.mu.Unlock()
	}))
	t.Cleanup(ts.Close)
	rec.URL = ts.URL
	return rec
}

// take returns the exchanges recorded since the last take.
func (r *recorder) take() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	ex := r.ex
	r.ex = nil
	return ex
}

// peek returns the exchanges recorded since the last take, keeping them.
func (r *recorder) peek() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.ex...)
}

func (r *recorder) outsideRequests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.outside...)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int)        { w.status = code; w.ResponseWriter.WriteHeader(code) }
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// result is the part of `claude -p --output-format json` the tests read.
type result struct {
	Type           string `json:"type"`
	Subtype        string `json:"subtype"`
	IsError        bool   `json:"is_error"`
	Result         string `json:"result"`
	APIErrorStatus *int   `json:"api_error_status"`
	NumTurns       int    `json:"num_turns"`
	SessionID      string `json:"session_id"`
	// DurationMS is the session's time by Claude Code's own clock, from
	// after its start-up (which a loaded machine stretches) to the result.
	DurationMS int64 `json:"duration_ms"`
}

// workspace is a HOME and a project directory inside it; runs sharing one
// can --resume each other's sessions.
type workspace struct{ home, dir string }

func newWorkspace(t *testing.T) workspace {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, "project")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return workspace{home: home, dir: dir}
}

// run runs `claude -p PROMPT --output-format json ARGS...` against baseURL
// with key as ANTHROPIC_API_KEY and rec as every proxy. It returns the
// parsed result and how long the process ran.
func (ws workspace) run(t *testing.T, claude string, rec *recorder, baseURL, key string, timeout time.Duration, prompt string, args ...string) (result, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, append([]string{"-p", prompt, "--output-format", "json"}, args...)...)
	cmd.Dir = ws.dir
	cmd.Env = []string{
		"PATH=/usr/bin:/bin", "HOME=" + ws.home, "TERM=dumb", "NO_COLOR=1",
		"ANTHROPIC_BASE_URL=" + baseURL, "ANTHROPIC_API_KEY=" + key,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"HTTP_PROXY=" + rec.URL, "HTTPS_PROXY=" + rec.URL, "ALL_PROXY=" + rec.URL,
		"http_proxy=" + rec.URL, "https_proxy=" + rec.URL, "all_proxy=" + rec.URL,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	// Claude Code may start helpers: end the whole process group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("claude -p %q did not finish within %v; statuses it got so far: %v\nstdout: %s\nstderr: %s",
			prompt, timeout, statuses(rec.peek()), stdout.String(), stderr.String())
	}
	var res result
	if jerr := json.Unmarshal(stdout.Bytes(), &res); jerr != nil || res.Type != "result" {
		t.Fatalf("claude -p %q: %v, no JSON result (%v)\nstdout: %s\nstderr: %s", prompt, err, jerr, stdout.String(), stderr.String())
	}
	if out := rec.outsideRequests(); len(out) > 0 {
		t.Errorf("Claude Code tried to reach other hosts: %q", out)
	}
	return res, elapsed
}
