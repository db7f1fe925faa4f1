package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/mock"
)

// startServe runs `llmguard serve` with args on a config that falls back
// from an overloaded Anthropic target to OpenAI (both the mock), and
// returns its base URL, its stderr and a stop function returning the exit
// code.
func startServe(t *testing.T, args ...string) (string, *lockedBuffer, func() int) {
	t.Helper()
	ms := httptest.NewServer(mock.New(nil))
	t.Cleanup(ms.Close)
	cfgPath := writeConfig(t, "providers:\n  anthropic: {base_url: "+ms.URL+", api_key: test-ant-key}\n  openai: {base_url: "+ms.URL+"/v1, api_key: test-oai-key}\n"+
		"routes:\n  default:\n    targets: [openai/gpt-4.1]\n"+
		"  flaky:\n    targets: [anthropic/claude-sonnet-4-5+fault=bad_key, openai/gpt-4.1]\n")
	cmd, urls := startCommand(t, nil, 1, append([]string{"serve", "--addr", "127.0.0.1:0", "--config", cfgPath}, args...)...)
	return urls[0], cmd.stderr, cmd.stop
}

func chatOnce(t *testing.T, base, route string) {
	t.Helper()
	send(t, "POST", base+"/v1/chat/completions", `{"model":"`+route+`","messages":[{"role":"user","content":"secret prompt text"}]}`,
		"Content-Type", "application/json")
}

// Issue 10 item 9: serve logs one access line per request at info, each
// failed attempt's one-liner at debug with -v, and JSON with --log-format json.
func TestServeLogs(t *testing.T) {
	t.Run("json -v", func(t *testing.T) {
		base, stderr, stop := startServe(t, "-v", "--log-format", "json")
		chatOnce(t, base, "flaky")
		if c := stop(); c != 0 {
			t.Fatalf("exit %d: %s", c, stderr)
		}
		var access, failure map[string]any
		for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("stderr line is not JSON: %q", l)
			}
			switch {
			case m["msg"] == "access":
				access = m
			case m["kind"] == "failure":
				failure = m
			}
		}
		if access == nil || access["route"] != "flaky" || access["target"] != "openai/gpt-4.1" || access["status"] != 200.0 ||
			access["attempts"] != 2.0 || access["fallbacks"] != 1.0 {
			t.Errorf("access line %v\n%s", access, stderr)
		}
		if failure == nil || failure["level"] != "DEBUG" || !strings.Contains(failure["verdict"].(string), "401") {
			t.Errorf("failed attempt line %v\n%s", failure, stderr)
		}
		for _, secret := range []string{"test-ant-key", "test-oai-key", "secret prompt"} {
			if strings.Contains(stderr.String(), secret) {
				t.Errorf("stderr contains %q", secret)
			}
		}
	})
	t.Run("text, info", func(t *testing.T) {
		base, stderr, stop := startServe(t)
		chatOnce(t, base, "flaky")
		if c := stop(); c != 0 {
			t.Fatalf("exit %d: %s", c, stderr)
		}
		out := stderr.String()
		if !strings.Contains(out, "msg=access") || !strings.Contains(out, "route=flaky target=openai/gpt-4.1 status=200 attempts=2 fallbacks=1") {
			t.Errorf("no text access line:\n%s", out)
		}
		if strings.Contains(out, "level=DEBUG") {
			t.Errorf("debug lines without -v:\n%s", out)
		}
	})
	t.Run("bad format", func(t *testing.T) {
		stderr := &lockedBuffer{}
		got := MainEnv(context.Background(), []string{"serve", "--log-format", "xml"}, &Env{Stdin: strings.NewReader(""),
			Stdout: io.Discard, Stderr: stderr, Getenv: func(string) string { return "" }})
		if got != 2 || !strings.Contains(stderr.String(), `--log-format: want text or json, not "xml"`) {
			t.Errorf("exit %d: %s", got, stderr)
		}
	})
}

// mcp --log-format json: JSON on stderr, stdout still only JSON-RPC (the
// session helper fails on any other stdout line).
func TestMCPLogFormatJSON(t *testing.T) {
	_, stderr := runMCPSessionArgs(t, []string{"mcp", "-v", "--log-format", "json"}, map[string]string{"HOME": t.TempDir()},
		mcpInit, mcpInitialized, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) == 0 || lines[0] == "" {
		t.Fatal("no log lines on stderr")
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("stderr line is not JSON: %q", l)
		}
	}
}
