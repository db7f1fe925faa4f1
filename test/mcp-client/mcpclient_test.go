// Package mcpclient holds the end-to-end tests of `llmguard mcp`: the built
// binary in stdio mode, and the official MCP TypeScript SDK client (node
// --test) driving it against `llmguard mock`.
package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/llmguard/llmguard/test/harness"
)

// startMock runs `llmguard mock` on a port of its own choosing (127.0.0.1:0)
// and returns the base URL it prints.
func startMock(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"mock", "--addr", "127.0.0.1:0"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	// "llmguard mock listening on http://127.0.0.1:PORT (scenario NAME)"
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Scan()
		line <- sc.Text()
		io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-line:
		url, _, _ := strings.Cut(strings.TrimPrefix(l, "llmguard mock listening on "), " ")
		if !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Fatalf("llmguard mock did not say where it listens: %q\n%s", l, stderr.String())
		}
		return url
	case <-time.After(10 * time.Second):
		t.Fatalf("llmguard mock did not start\n%s", stderr.String())
	}
	return ""
}

// TestStdoutCarriesOnlyJSONRPC runs a failing, retrying, verbosely logging
// stdio session and checks that every line on stdout is a JSON-RPC message.
func TestStdoutCarriesOnlyJSONRPC(t *testing.T) {
	bin := harness.Binary(t)
	mockURL := startMock(t, bin, "--scenario", "overload-burst")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "mcp", "-v")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"ANTHROPIC_API_KEY=sk-ant-test", "ANTHROPIC_BASE_URL=" + mockURL}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"stdout-test","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"summarize","arguments":{"text":"The provider was overloaded three times, then answered."},"_meta":{"progressToken":"p1"}}}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"decode_error","arguments":{"status":529,"body":"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}}}`)

	var lines []string
	var progress int
	got := map[float64]bool{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      *float64        `json:"id"`
			Method  string          `json:"method"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.JSONRPC != "2.0" || (msg.ID == nil && msg.Method == "") {
			t.Fatalf("stdout line %d is not a JSON-RPC message: %q (err %v)\nstderr:\n%s", len(lines), line, err, stderr.String())
		}
		if msg.Method == "notifications/progress" {
			progress++
		}
		if msg.ID != nil && (msg.Result != nil || msg.Error != nil) {
			got[*msg.ID] = true
		}
		if got[1] && got[2] && got[3] {
			break
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil && ctx.Err() != nil {
		t.Fatalf("llmguard mcp did not finish: %v", ctx.Err())
	}
	if !got[2] || !got[3] {
		t.Fatalf("missing responses (got %v) in stdout:\n%s\nstderr:\n%s", got, strings.Join(lines, "\n"), stderr.String())
	}
	if progress == 0 {
		t.Errorf("no progress notification on a retrying call; stdout:\n%s", strings.Join(lines, "\n"))
	}
	if !strings.Contains(stderr.String(), "level=") {
		t.Errorf("verbose session logged nothing on stderr")
	}
	t.Logf("%d stdout lines, all JSON-RPC (%d progress notifications); %d bytes of logs on stderr", len(lines), progress, stderr.Len())
}

// TestNodeClient runs test/mcp-client/*.test.mjs: the official MCP
// TypeScript SDK client spawning `llmguard mcp` against `llmguard mock`.
// Install first: cd test/mcp-client && npm ci
func TestNodeClient(t *testing.T) {
	node := harness.Node(t, ".", "@modelcontextprotocol/sdk")
	bin := harness.Binary(t)
	out := harness.RunNode(t, node, ".", 3*time.Minute, []string{"LLMGUARD_BIN=" + bin}, "mcp.test.mjs")
	t.Logf("node --test:\n%s", out)
}
