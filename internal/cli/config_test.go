package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("providers:\n  anthropic: {api_key: ${ANTHROPIC_API_KEY}}\nroutes:\n  default:\n    targets: [anthropic, {target: sim, breaker: {failures: 2}}]\n"), 0o600)
	os.WriteFile(bad, []byte("routes:\n  default:\n    targets: [foo/bar]\n    retry: {budget: 2, max_atempts: 3}\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "invalid.yaml"), []byte("routes:\n  default:\n    targets: [foo/bar]\n    retry: {budget: 2}\n"), 0o600)
	const key = "sk-ant-api03-supersecretvalue-WXYZ"
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		code       int
		stdout     []string // substrings
		stderr     []string
		noStdout   bool
		wantNoLeak bool
	}{
		{"valid file", []string{"config", "check", good}, map[string]string{"ANTHROPIC_API_KEY": key}, 0,
			[]string{"# llmguard effective configuration (source: " + good, "api_key: sk-ant-…WXYZ", "- anthropic/claude-sonnet-4-5", "failures: 2", "max_total_attempts: 10"}, nil, false, true},
		{"unknown key and every other problem", []string{"config", "check", bad}, nil, 1, nil,
			[]string{bad + `:3:15: routes.default.targets[0]: unknown provider "foo"`, bad + `:4:13: routes.default.retry.budget: must be in [0,1]`,
				bad + `:4:24: routes.default.retry.max_atempts: unknown key "max_atempts"`, "config check: 3 problems"}, true, true},
		{"invalid values", []string{"config", "check", filepath.Join(dir, "invalid.yaml")}, nil, 1, nil,
			[]string{"invalid.yaml:3:15: routes.default.targets[0]: unknown provider \"foo\"", "invalid.yaml:4:13: routes.default.retry.budget: must be in [0,1]", "config check: 2 problems"}, true, true},
		{"missing key names the variable", []string{"config", "check", good}, nil, 1, nil,
			[]string{"good.yaml:2:15: providers.anthropic.api_key: no API key (${ANTHROPIC_API_KEY} is not set)"}, true, true},
		{"missing file", []string{"config", "check", filepath.Join(dir, "nope.yaml")}, nil, 1, nil, []string{"nope.yaml"}, true, true},
		{"zero config from environment", []string{"config", "check"}, map[string]string{"DEEPSEEK_API_KEY": "sk-deepseek-0123456789"}, 0,
			[]string{"(source: environment;", "- deepseek/deepseek-chat", "api_key: sk-…6789"}, nil, false, true},
		{"zero config sim", []string{"config", "check"}, nil, 0, []string{"- sim/sim-1", "type: sim"}, nil, false, true},
		{"no subcommand", []string{"config"}, nil, 2, nil, []string{"Usage: llmguard config check"}, true, false},
		{"unknown subcommand", []string{"config", "show"}, nil, 2, nil, []string{`unknown subcommand "show"`}, true, false},
		{"too many files", []string{"config", "check", "a", "b"}, nil, 2, nil, []string{"at most one FILE"}, true, false},
		{"bad flag", []string{"config", "check", "-x"}, nil, 2, nil, []string{"flag provided but not defined"}, true, false},
		{"help", []string{"config", "check", "-h"}, nil, 0, nil, []string{"Usage:"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(dir) // no llmguard.yaml here
			var stdout, stderr bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return tt.env[k] }}
			code := MainEnv(context.Background(), tt.args, env)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout.String(), stderr.String())
			}
			checkText(t, "stdout", stdout.String(), tt.stdout, nil)
			checkText(t, "stderr", stderr.String(), tt.stderr, nil)
			if tt.noStdout && stdout.Len() > 0 {
				t.Errorf("unexpected stdout:\n%s", stdout.String())
			}
			if all := stdout.String() + stderr.String(); strings.Contains(all, "supersecret") || strings.Contains(all, "0123456789") {
				t.Errorf("output leaks a key:\n%s", all)
			}
		})
	}
}
