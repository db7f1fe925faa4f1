package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runMCPSession runs `llmguard mcp` through MainEnv with the given
// environment, sends the JSON-RPC lines and returns stdout's lines once the
// responses to every request have arrived, keyed by request id.
func runMCPSession(t *testing.T, vars map[string]string, lines ...string) (responses map[float64]string, stderr string) {
	t.Helper()
	return runMCPSessionArgs(t, []string{"mcp", "-v"}, vars, lines...)
}

// runMCPSessionArgs is runMCPSession with the command line args.
func runMCPSessionArgs(t *testing.T, args []string, vars map[string]string, lines ...string) (responses map[float64]string, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errBuf bytes.Buffer
	env := &Env{Stdin: inR, Stdout: outW, Stderr: &errBuf, Getenv: func(k string) string { return vars[k] }}
	code := make(chan int, 1)
	go func() { code <- MainEnv(ctx, args, env); outW.Close() }()
	go func() {
		for _, l := range lines {
			io.WriteString(inW, l+"\n")
		}
	}()
	pending := map[float64]bool{}
	for _, l := range lines {
		var m struct{ ID *float64 }
		json.Unmarshal([]byte(l), &m)
		if m.ID != nil {
			pending[*m.ID] = true
		}
	}
	responses = map[float64]string{}
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			JSONRPC string   `json:"jsonrpc"`
			ID      *float64 `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" {
			t.Fatalf("stdout line is not JSON-RPC: %q", sc.Text())
		}
		if m.ID != nil {
			delete(pending, *m.ID)
			responses[*m.ID] = sc.Text()
		}
		if len(pending) == 0 {
			break
		}
	}
	inW.Close()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit code %d; stderr:\n%s", c, errBuf.String())
		}
	case <-ctx.Done():
		t.Fatal("llmguard mcp did not exit after stdin closed")
	}
	return responses, errBuf.String()
}

const mcpInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
const mcpInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

func TestMCPWithoutKeyListsToolsAndSaysWhatToSet(t *testing.T) {
	resp, stderr := runMCPSession(t, map[string]string{"HOME": t.TempDir()},
		mcpInit, mcpInitialized,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","arguments":{"prompt":"hi"}}}`)
	all := resp[2]
	for _, tool := range []string{"summarize", "ask", "chat", "batch_summarize", "decode_error", "llm_status"} {
		if !strings.Contains(all, `"name":"`+tool+`"`) {
			t.Errorf("tools/list lacks %s", tool)
		}
	}
	var res struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal([]byte(resp[3]), &res); err != nil {
		t.Fatal(err)
	}
	if !res.Result.IsError || len(res.Result.Content) != 1 {
		t.Fatalf("want one isError line, got %s", resp[3])
	}
	checkText(t, "the error line", res.Result.Content[0].Text, []string{"ANTHROPIC_API_KEY", "shell profile", `"env"`}, nil)
	if !strings.Contains(stderr, "no provider key") {
		t.Errorf("stderr does not say why: %s", stderr)
	}
}

func TestMCPFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help", []string{"mcp", "-h"}, 0, "claude mcp add llmguard -e ANTHROPIC_API_KEY="},
		{"stray argument", []string{"mcp", "extra"}, 2, `unexpected argument "extra"`},
		{"bad flag", []string{"mcp", "--nope"}, 2, "flag provided but not defined"},
		{"remote without token", []string{"mcp", "--http", "0.0.0.0:0"}, 2, "not a loopback address: set --token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
			if code := MainEnv(context.Background(), tc.args, env); code != tc.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("wrote to stdout: %q", stdout.String())
			}
		})
	}
}

func TestMCPOverHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr,
		Getenv: func(k string) string {
			return map[string]string{"LLMGUARD_MCP_TOKEN": "tok-123", "HOME": t.TempDir()}[k]
		}}
	code := make(chan int, 1)
	go func() { code <- MainEnv(ctx, []string{"mcp", "--http", ":0"}, env) }()
	url := waitLog(t, &stderr, regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/)`), "listening url")
	post := func(origin, token string) int {
		if token != "" {
			token = "Bearer " + token
		}
		resp, _ := send(t, "POST", url, mcpInit, "Content-Type", "application/json",
			"Accept", "application/json, text/event-stream", "Origin", origin, "Authorization", token)
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name, origin, token string
		want                int
	}{
		{"token from LLMGUARD_MCP_TOKEN", "", "tok-123", http.StatusOK},
		{"no token", "", "", http.StatusUnauthorized},
		{"foreign origin", "http://attacker.example", "tok-123", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := post(tc.origin, tc.token); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
		})
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("exit code %d after shutdown", c)
	}
}

// TestMCPMetrics: /metrics is served beside MCP on --http (behind its
// token), and on --metrics-addr in stdio mode.
func TestMCPMetrics(t *testing.T) {
	cfg := mockConfig(t)
	get := func(t *testing.T, url, token string) (int, string) {
		t.Helper()
		if token != "" {
			token = "Bearer " + token
		}
		resp, b := send(t, "GET", url, "", "Authorization", token)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		name string
		args []string
		re   string
	}{
		{"http", []string{"mcp", "--config", cfg, "--http", "127.0.0.1:0"}, `url=(http://127\.0\.0\.1:\d+)/`},
		{"stdio", []string{"mcp", "--config", cfg, "--metrics-addr", "127.0.0.1:0"}, `url=(http://127\.0\.0\.1:\d+)/metrics`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stderr lockedBuffer
			stdin, keep := io.Pipe() // stdio mode runs until stdin ends
			defer keep.Close()
			env := &Env{Stdin: stdin, Stdout: io.Discard, Stderr: &stderr,
				Getenv: func(k string) string {
					return map[string]string{"LLMGUARD_MCP_TOKEN": "tok-9", "HOME": t.TempDir()}[k]
				}}
			code := make(chan int, 1)
			go func() { code <- MainEnv(ctx, tc.args, env) }()
			base := waitLog(t, &stderr, regexp.MustCompile(tc.re), "url")
			if c, _ := get(t, base+"/metrics", ""); c != http.StatusUnauthorized {
				t.Errorf("without the token: %d, want 401", c)
			}
			c, body := get(t, base+"/metrics", "tok-9")
			if c != 200 || !strings.Contains(body, "# TYPE go_goroutines gauge") {
				t.Errorf("/metrics: %d\n%.400s", c, body)
			}
			cancel()
			keep.Close()
			if c := <-code; c != 0 {
				t.Errorf("exit code %d\n%s", c, stderr.String())
			}
		})
	}
}
