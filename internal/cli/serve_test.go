package cli

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

func TestServe(t *testing.T) {
	getenv := func(k string) string {
		if k == "LLMGUARD_GATEWAY_KEYS" {
			return "gw-secret-1, gw-secret-2"
		}
		return ""
	}
	cmd, urls := startCommand(t, getenv, 2, "serve", "--addr", "127.0.0.1:0", "--config", mockConfig(t), "--admin-addr", "127.0.0.1:0")
	base, admin, stderr := urls[0], urls[1], cmd.stderr

	tests := []struct {
		name, key string
		want      int
	}{
		{"no key", "", 401},
		{"gateway key", "gw-secret-2", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if status, b := postMessage(t, base, "x-api-key", tt.key); status != tt.want {
				t.Fatalf("status %d, want %d: %s", status, tt.want, b)
			}
		})
	}
	status := func(key string) (int, string) {
		if key != "" {
			key = "Bearer " + key
		}
		res, b := send(t, "GET", admin+"/status", "", "Authorization", key)
		return res.StatusCode, string(b)
	}
	if code, b := status("gw-secret-1"); code != 200 || !strings.Contains(b, `"anthropic/claude-sonnet-4-5"`) {
		t.Errorf("admin /status %d: %s", code, b)
	}
	if code, b := status(""); code != 401 {
		t.Errorf("admin /status without a gateway key: %d, want 401: %s", code, b)
	}
	if c := cmd.stop(); c != 0 {
		t.Errorf("exit %d; stderr %s", c, stderr)
	}
	if strings.Contains(stderr.String(), "gw-secret") || strings.Contains(stderr.String(), "test-key") {
		t.Errorf("a key was logged: %s", stderr)
	}
}

func TestServeBadInvocation(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"unknown flag", []string{"serve", "--nope"}, 2},
		{"extra argument", []string{"serve", "extra"}, 2},
		{"missing config file", []string{"serve", "--config", filepath.Join(t.TempDir(), "absent.yaml")}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stderr := &lockedBuffer{}
			got := MainEnv(context.Background(), tt.args, &Env{Stdin: strings.NewReader(""), Stdout: io.Discard,
				Stderr: stderr, Getenv: func(string) string { return "" }})
			if got != tt.want {
				t.Errorf("exit %d, want %d; stderr %s", got, tt.want, stderr)
			}
		})
	}
}

// With no key at all, serve works on a fresh machine: the simulated provider
// answers, labelled in the answer and in the log.
func TestServeZeroConfigSim(t *testing.T) {
	t.Chdir(t.TempDir()) // no llmguard.yaml
	cmd, urls := startCommand(t, nil, 1, "serve", "--addr", "127.0.0.1:0")
	base, stderr := urls[0], cmd.stderr
	res, b := send(t, "POST", base+"/v1/chat/completions", `{"model":"default","messages":[{"role":"user","content":"hello"}]}`,
		"Content-Type", "application/json")
	if res.StatusCode != 200 || !strings.Contains(string(b), strings.TrimSpace(SimLabel)) {
		t.Errorf("status %d, body %s: want a labelled simulated answer", res.StatusCode, b)
	}
	if got := res.Header.Get("x-llmguard-target"); !strings.HasPrefix(got, "sim/") {
		t.Errorf("x-llmguard-target %q, want sim/...", got)
	}
	cmd.stop()
	if !strings.Contains(stderr.String(), "simulated provider sim") || !strings.Contains(stderr.String(), "ANTHROPIC_API_KEY") {
		t.Errorf("stderr does not say the simulated provider answers and which keys to set: %s", stderr)
	}
}
