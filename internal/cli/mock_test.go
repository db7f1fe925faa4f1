package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMockServes(t *testing.T) {
	cmd, urls := startCommand(t, nil, 1, "mock", "--addr", "127.0.0.1:0", "--scenario", "overload-burst")
	base, stderr := urls[0], cmd.stderr

	for i, want := range []int{529, 529, 529, 200} {
		resp, _ := send(t, "POST", base+"/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
			"x-api-key", "sk-ant-secret-abcd")
		if resp.StatusCode != want {
			t.Errorf("request %d: status %d, want %d", i, resp.StatusCode, want)
		}
	}
	_, b := send(t, "GET", base+"/_mock/requests", "")
	var page struct{ Count int }
	json.Unmarshal(b, &page)
	if page.Count != 4 {
		t.Errorf("request log count %d, want 4", page.Count)
	}
	if c := cmd.stop(); c != 0 {
		t.Errorf("exit code %d", c)
	}
	logs := stderr.String()
	if strings.Count(logs, "mock request") != 4 || !strings.Contains(logs, "key=…abcd") || strings.Contains(logs, "secret") {
		t.Errorf("stderr logs:\n%s", logs)
	}
}

func TestMockFlags(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("rules:\n  - sequence: [529]\n    rate: 2\n"), 0o644)
	tests := []struct {
		name        string
		args        []string
		code        int
		out, errOut string
	}{
		{"list", []string{"--list"}, 0, "overload-burst", ""},
		{"unknown scenario", []string{"--scenario", "nope", "--addr", "127.0.0.1:0"}, 2, "", "no such built-in"},
		{"bad scenario file", []string{"--scenario", bad, "--addr", "127.0.0.1:0"}, 2, "", "rules[0].fault: required with rate"},
		{"bad flag", []string{"--nope"}, 2, "", "flag provided but not defined"},
		{"extra arg", []string{"x"}, 2, "", "unexpected argument"},
		{"bad addr", []string{"--addr", "256.0.0.1:99999"}, 1, "", "--addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := MainEnv(context.Background(), append([]string{"mock"}, tt.args...),
				&Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }})
			if code != tt.code || !strings.Contains(out.String(), tt.out) || !strings.Contains(errOut.String(), tt.errOut) {
				t.Errorf("code %d (want %d)\nstdout: %s\nstderr: %s", code, tt.code, out.String(), errOut.String())
			}
			if tt.code == 2 && tt.name != "bad flag" && strings.Count(strings.TrimSpace(errOut.String()), "\n") > 0 {
				t.Errorf("error is not one line: %q", errOut.String())
			}
		})
	}
}
