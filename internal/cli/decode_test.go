package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code = MainEnv(context.Background(), args, env)
	return code, out.String(), errb.String()
}

func TestDecode(t *testing.T) {
	dir := t.TempDir()
	overloaded := filepath.Join(dir, "529.json")
	if err := os.WriteFile(overloaded, []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CZAau32QzxDkriovTaFCB"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	twoEnvelopes := `{"object":"error","message":"Service tier capacity exceeded for this model.","type":"service_tier_capacity_exceeded","code":"3505",` +
		`"error":{"message":"Rate limit exceeded","type":"rate_limit_exceeded"}}`
	quota := `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`

	tests := []struct {
		name       string
		stdin      string
		args       []string
		code       int
		stdout     []string // substrings, in order
		stderrLine string   // substring of the single stderr line, "" = empty stderr
	}{
		{
			name:   "file argument, plain output",
			args:   []string{"decode", "--provider", "anthropic", "--status", "529", overloaded},
			stdout: []string{"529 overloaded_error: Overloaded (request-id req_011CZAau32QzxDkriovTaFCB)\n", "class: overloaded | retryable: yes | scope: model | fallback: yes", "what to do: retry with backoff"},
		},
		{
			name:   "flags after FILE",
			args:   []string{"decode", overloaded, "--status", "529"},
			stdout: []string{"529 overloaded_error: Overloaded", "provider: anthropic (guessed)"},
		},
		{
			name:   "stdin body and repeated -H",
			stdin:  quota,
			args:   []string{"decode", "--status", "429", "-H", "x-request-id: req_abc123456789", "-H", "Retry-After: 1"},
			stdout: []string{"429 insufficient_quota: You exceeded your current quota", "(request-id req_abc123456789)", "class: quota_exhausted | retryable: no | scope: key", "what to do: add credits"},
		},
		{
			name:   "--provider decides a body with two envelopes",
			stdin:  twoEnvelopes,
			args:   []string{"decode", "--provider", "mistral", "--status", "429"},
			stdout: []string{"429 service_tier_capacity_exceeded: Service tier capacity exceeded", "class: overloaded"},
		},
		{
			name:   "the same body under auto",
			stdin:  twoEnvelopes,
			args:   []string{"decode", "--status", "429"},
			stdout: []string{"429 rate_limit_exceeded: Rate limit exceeded", "class: rate_limited"},
		},
		{
			name:   "stdin via dash",
			stdin:  quota,
			args:   []string{"decode", "--status", "429", "-"},
			stdout: []string{"quota_exhausted"},
		},
		{
			name:   "retry-after header gives the wait",
			stdin:  `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
			args:   []string{"decode", "--status=429", "-H=retry-after: 7"},
			stdout: []string{"retryable: yes, after 7s", "retry in 7s"},
		},
		{
			name:   "transport error",
			args:   []string{"decode", "--status", "0", "--error", "dial tcp: connection refused"},
			stdout: []string{"network: connection refused: dial tcp: connection refused\n", "scope: provider"},
		},
		{
			name:   "timeout transport error",
			args:   []string{"decode", "--status", "0", "--error", "context deadline exceeded"},
			stdout: []string{"timeout: context deadline exceeded"},
		},
		{
			name:   "html page",
			stdin:  "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>",
			args:   []string{"decode", "--status", "502"},
			stdout: []string{`502 html error page from proxy: "502 Bad Gateway"`, "class: server_error"},
		},
		{name: "unknown provider", args: []string{"decode", "--provider", "acme", "--status", "500"}, code: 2, stderrLine: `unknown provider "acme"`},
		{name: "missing status", stdin: "{}", args: []string{"decode"}, code: 2, stderrLine: "--status CODE is required"},
		{name: "status out of range", args: []string{"decode", "--status", "1000"}, code: 2, stderrLine: "not an HTTP status"},
		{name: "status 0 without error", args: []string{"decode", "--status", "0"}, code: 2, stderrLine: "--status 0 needs --error"},
		{name: "bad header", args: []string{"decode", "--status", "500", "-H", "no-colon"}, code: 2, stderrLine: "not of the form 'Name: value'"},
		{name: "bad status value", args: []string{"decode", "--status", "abc"}, code: 2, stderrLine: "invalid value"},
		{name: "unknown flag", args: []string{"decode", "--bogus"}, code: 2, stderrLine: "flag provided but not defined"},
		{name: "unreadable file", args: []string{"decode", "--status", "500", filepath.Join(dir, "missing.json")}, code: 2, stderrLine: "missing.json"},
		{name: "two files", args: []string{"decode", "--status", "500", overloaded, overloaded}, code: 2, stderrLine: "at most one FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d (stdout %q, stderr %q)", code, tt.code, stdout, stderr)
			}
			rest := stdout
			for _, s := range tt.stdout {
				i := strings.Index(rest, s)
				if i < 0 {
					t.Fatalf("stdout %q lacks %q (in order)", stdout, s)
				}
				rest = rest[i+len(s):]
			}
			if tt.stderrLine == "" {
				if stderr != "" {
					t.Errorf("unexpected stderr %q", stderr)
				}
				return
			}
			if stdout != "" {
				t.Errorf("stdout on error: %q", stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || !strings.Contains(stderr, tt.stderrLine) {
				t.Errorf("stderr %q: want one line containing %q", stderr, tt.stderrLine)
			}
		})
	}
}

func TestDecodeJSON(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  map[string]any
	}{
		{
			name:  "anthropic 529",
			stdin: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CU"}`,
			args:  []string{"decode", "--json", "--status", "529"},
			want: map[string]any{"class": "overloaded", "retryable": true, "wait_seconds": nil, "until": nil, "scope": "model",
				"fallback": true, "provider_type": "overloaded_error", "request_id": "req_011CU", "message": "529 overloaded_error: Overloaded (request-id req_011CU)"},
		},
		{
			name:  "gemini per minute with retry delay",
			stdin: `{"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}`,
			args:  []string{"decode", "--provider", "gemini", "--status", "429", "--json"},
			want: map[string]any{"class": "rate_limited", "retryable": true, "wait_seconds": 1.5, "until": nil, "scope": "model",
				"fallback": true, "provider_type": "RESOURCE_EXHAUSTED", "request_id": "", "message": "429 RESOURCE_EXHAUSTED: Quota exceeded."},
		},
		{
			name: "transport",
			args: []string{"decode", "--json", "--status", "0", "--error", "dial tcp: connection refused"},
			want: map[string]any{"class": "network", "retryable": true, "wait_seconds": nil, "until": nil, "scope": "provider",
				"fallback": true, "provider_type": "connection_refused", "request_id": "", "message": "network: connection refused: dial tcp: connection refused"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.stdin, tt.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if strings.Count(stdout, "\n") != 1 {
				t.Errorf("want exactly one JSON line, got %q", stdout)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("stdout is not JSON: %v: %q", err, stdout)
			}
			keys := slices.Sorted(maps.Keys(got))
			wantKeys := []string{"class", "fallback", "message", "provider_type", "request_id", "retryable", "scope", "until", "wait_seconds"}
			if diff := cmp.Diff(wantKeys, keys); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeHelp(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "decode", "-h")
	if code != 0 || stdout != "" || !strings.Contains(stderr, "Usage: llmguard decode") || !strings.Contains(stderr, "openrouter") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
