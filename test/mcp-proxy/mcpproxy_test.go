// Package mcpproxytest holds the end-to-end tests of `llmguard mcp
// --upstream`: the built binary guarding the fake upstream MCP server
// (mcpproxy/internal/fakeupstream, built as a real process) on stdio and on
// Streamable HTTP over 127.0.0.1, driven by the Go SDK's client, the
// official MCP TypeScript SDK client and the MCP Inspector CLI (pinned in
// package-lock.json; install them first: cd test/mcp-proxy && npm ci).
package mcpproxytest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmguard/llmguard/test/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fakeDir != "" {
		os.RemoveAll(fakeDir)
	}
	os.Exit(code)
}

var (
	fakeOnce sync.Once
	fakeDir  string
	fakeBin  string
	fakeErr  error
)

// fakeServer builds the fake upstream MCP server once per test process.
func fakeServer(t *testing.T) string {
	t.Helper()
	fakeOnce.Do(func() {
		fakeDir, fakeErr = os.MkdirTemp("", "llmguard-fake-mcp-")
		if fakeErr != nil {
			return
		}
		fakeBin = filepath.Join(fakeDir, "fake-mcp-server")
		out, err := exec.Command("go", "build", "-o", fakeBin, "../../mcpproxy/internal/fakeupstream/fake-mcp-server").CombinedOutput()
		if err != nil {
			fakeErr = fmt.Errorf("go build fake-mcp-server: %v\n%s", err, out)
		}
	})
	if fakeErr != nil {
		t.Fatal(fakeErr)
	}
	return fakeBin
}

// guarded is a client session to `llmguard mcp` with args, started as a
// real process, with its stderr and the fake's execution log.
type guarded struct {
	cs     *mcp.ClientSession
	stderr *harness.SyncBuffer
	log    string // FAKE_UPSTREAM_LOG
}

func startGuarded(t *testing.T, args ...string) *guarded {
	t.Helper()
	bin := harness.Binary(t)
	g := &guarded{stderr: &harness.SyncBuffer{}, log: filepath.Join(t.TempDir(), "executions.log")}
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "FAKE_UPSTREAM_LOG=" + g.log}
	cmd.Stderr = g.stderr
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcp-proxy-test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect to llmguard mcp: %v\n%s", err, g.stderr)
	}
	t.Cleanup(func() { cs.Close() })
	g.cs = cs
	return g
}

// call calls tool and returns its text, whether it is an error, and how
// long it took.
func (g *guarded) call(t *testing.T, tool string, args map[string]any) (string, bool, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	res, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, g.stderr)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError && (b.Len() == 0 || strings.ContainsAny(b.String(), "\r\n")) {
		t.Errorf("%s: the error is not one line: %q", tool, b.String())
	}
	return b.String(), res.IsError, took
}

// executions counts tool's runs in the fake's execution log (every run of
// the server process).
func (g *guarded) executions(tool string) int {
	data, _ := os.ReadFile(g.log)
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if l == tool {
			n++
		}
	}
	return n
}

// until calls tool until its text matches re, for at most d.
func (g *guarded) until(t *testing.T, d time.Duration, tool string, args map[string]any, re string) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		txt, _, took := g.call(t, tool, args)
		if regexp.MustCompile(re).MatchString(txt) {
			return txt, took
		}
		if time.Since(start) > d {
			t.Fatalf("%s never matched %q within %v; last: %q\n%s", tool, re, d, txt, g.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestStdioUpstream guards the fake as a stdio child process of llmguard.
func TestStdioUpstream(t *testing.T) {
	fake := fakeServer(t)
	g := startGuarded(t, "--tool-timeout", "2s", "--upstream", "fake="+fake)

	t.Run("tools re-exposed", func(t *testing.T) {
		tools := map[string]*mcp.Tool{}
		for tool, err := range g.cs.Tools(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			tools[tool.Name] = tool
		}
		for _, name := range []string{"ask", "llm_status", "echo", "lookup", "charge", "freeze"} {
			if tools[name] == nil {
				t.Errorf("no tool %q", name)
			}
		}
		if e := tools["echo"]; e == nil || e.Annotations == nil || !e.Annotations.ReadOnlyHint {
			t.Errorf("echo lost its readOnlyHint: %+v", e)
		}
	})

	t.Run("traceback is one line", func(t *testing.T) {
		txt, isErr, _ := g.call(t, "fail", nil)
		if want := "fake/fail: tool error: LookupError: item 42 not found in catalog; not retried by llmguard (the tool is not idempotent)"; !isErr || txt != want {
			t.Errorf("fail = %q, want %q", txt, want)
		}
	})

	t.Run("non-idempotent retried by the client runs once", func(t *testing.T) {
		// The charge outlasts the first call's 2s deadline (it cannot end
		// sooner: it starts after the call arrived) and ends well within the
		// retry's, which starts 2s later: 1.5s to spare on a loaded machine.
		args := map[string]any{"amount": 5, "sleep_ms": 2500}
		first, isErr, took := g.call(t, "charge", args)
		if !isErr || !strings.Contains(first, "no answer from upstream \"fake\" within this tool's 2s deadline") {
			t.Errorf("first call: %q", first)
		}
		again, isErr, took2 := g.call(t, "charge", args) // the agent retries at once
		if isErr || again != "charged 5 (charge #1)" {
			t.Errorf("the retry got %q, want the first call's result", again)
		}
		third, _, took3 := g.call(t, "charge", args)
		if n := g.executions("charge"); n != 1 || third != again {
			t.Errorf("charge ran %d times (want 1); third call got %q", n, third)
		}
		t.Logf("charge: first call %v: %q; the client's retry %v: %q; a repeat %v; executions %d",
			took.Round(time.Millisecond), first, took2.Round(time.Millisecond), again, took3.Round(time.Millisecond), g.executions("charge"))
	})

	t.Run("read-only retried through a crash", func(t *testing.T) {
		txt, isErr, took := g.call(t, "lookup", map[string]any{"id": "7", "crash_first": 1})
		if isErr || txt != "found 7" {
			t.Errorf("lookup = %q (isError %v)\n%s", txt, isErr, g.stderr)
		}
		if n := g.executions("lookup"); n != 2 {
			t.Errorf("lookup ran %d times, want 2 (the crash, then the retry on the restarted server)", n)
		}
		t.Logf("lookup through a crash: %q in %v", txt, took.Round(time.Millisecond))
	})

	t.Run("crash is restarted", func(t *testing.T) {
		txt, isErr, _ := g.call(t, "crash", nil)
		if !isErr || !strings.Contains(txt, `fake/crash: upstream "fake" stopped during the call`) || !strings.Contains(txt, "it may have run") {
			t.Errorf("crash = %q", txt)
		}
		// Two crashes in a row soon after a start are a crash loop: the
		// restart waits for the breaker's cooldown.
		txt, took := g.until(t, 15*time.Second, "echo", map[string]any{"text": "back"}, "^back$")
		t.Logf("after the crash: %q (the last call took %v)", txt, took.Round(time.Millisecond))
		if !strings.Contains(g.stderr.String(), `upstream \"fake\" stopped: exited (exit status 3)`) {
			t.Errorf("no log line for the crash:\n%s", g.stderr)
		}
	})

	t.Run("hung server trips its breaker", func(t *testing.T) {
		txt, isErr, took := g.call(t, "freeze", nil)
		if !isErr || !strings.Contains(txt, "no answer from upstream \"fake\" within this tool's 2s deadline") {
			t.Errorf("freeze = %q", txt)
		}
		t.Logf("freeze: %q after %v", txt, took.Round(time.Millisecond))
		// The ping that tells a hang from a slow tool has 5s.
		txt, took = g.until(t, 15*time.Second, "echo", map[string]any{"text": "x"}, `skipped: upstream "fake" is down \(not answering`)
		t.Logf("a call as the hang is found: %q after %v", txt, took.Round(time.Millisecond))
		txt, isErr, took = g.call(t, "lookup", map[string]any{"id": "1"})
		if !isErr || !strings.Contains(txt, `fake/lookup: skipped: upstream "fake" is down (not answering`) || took > 500*time.Millisecond {
			t.Errorf("a call to the hung server: %q after %v, want skipped at once", txt, took)
		}
		t.Logf("the next call: %q after %v", txt, took.Round(time.Millisecond))
		txt, took = g.until(t, 20*time.Second, "echo", map[string]any{"text": "back"}, "^back$")
		t.Logf("after the restart: %q after %v", txt, took.Round(time.Millisecond))
	})
}

// TestHTTPUpstream guards the fake as a Streamable HTTP server on 127.0.0.1.
func TestHTTPUpstream(t *testing.T) {
	fake := fakeServer(t)
	srv := exec.Command(fake, "--http", "127.0.0.1:0")
	srv.Env = []string{"FAKE_UPSTREAM_LOG=" + filepath.Join(t.TempDir(), "http.log")}
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		t.Fatal("fake-mcp-server --http said nothing")
	}
	url := strings.TrimPrefix(sc.Text(), "listening on ")
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("fake-mcp-server --http: %q", sc.Text())
	}
	g := startGuarded(t, "--tool-timeout", "2s", "--upstream", "web="+url)
	if txt, isErr, _ := g.call(t, "echo", map[string]any{"text": "over http"}); isErr || txt != "over http" {
		t.Errorf("echo over HTTP = %q (isError %v)\n%s", txt, isErr, g.stderr)
	}
	if txt, isErr, _ := g.call(t, "fail", nil); !isErr || !strings.HasPrefix(txt, "web/fail: tool error: LookupError: item 42") {
		t.Errorf("fail over HTTP = %q", txt)
	}
	// The server goes away: a read-only call is retried, then fails in one line.
	srv.Process.Kill()
	srv.Wait()
	txt, isErr, took := g.call(t, "echo", map[string]any{"text": "gone"})
	if !isErr || !strings.HasPrefix(txt, "web/echo: 3 attempts failed (last: upstream \"web\" is unreachable (") || took > time.Second {
		t.Errorf("echo to a dead server = %q after %v", txt, took)
	}
	t.Logf("echo to a dead HTTP server: %q after %v", txt, took.Round(time.Millisecond))
}

// TestBrokenUpstream: a server that can't start is one log line with the
// last line of its traceback; llmguard's own tools still serve.
func TestBrokenUpstream(t *testing.T) {
	fake := fakeServer(t)
	g := startGuarded(t, "--upstream", "broken="+fake+" --broken")
	line := regexp.MustCompile(`upstream \\"broken\\" can't start: exited \(exit status 1\): ModuleNotFoundError: No module named 'requests'; next try at \d\d:\d\d:\d\dZ`)
	for deadline := time.Now().Add(10 * time.Second); !line.MatchString(g.stderr.String()); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no one-line log of the failed start:\n%s", g.stderr)
		}
	}
	if _, isErr, _ := g.call(t, "decode_error", map[string]any{"status": 529, "body": `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}); isErr {
		t.Errorf("llmguard's own tool failed beside a broken upstream")
	}
}

// TestNodeClients runs mcp-proxy.test.mjs: the MCP TypeScript SDK client and
// the MCP Inspector CLI, each spawning `llmguard mcp --upstream` as a user's
// client would.
func TestNodeClients(t *testing.T) {
	node := harness.Node(t, ".", "@modelcontextprotocol/sdk", "@modelcontextprotocol/inspector")
	env := []string{"LLMGUARD_BIN=" + harness.Binary(t), "FAKE_BIN=" + fakeServer(t), "HOME=" + t.TempDir()}
	harness.RunNode(t, node, ".", 3*time.Minute, env, "mcp-proxy.test.mjs")
}
