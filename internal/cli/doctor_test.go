package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/mock"
)

// upstream serves the mock with scenario (nil: healthy) on 127.0.0.1;
// dateOffset, when non-zero, skews the Date header it sends.
func upstream(t *testing.T, scenario *mock.Scenario, dateOffset time.Duration) string {
	m := mock.New(&mock.Config{Scenario: scenario})
	var h http.Handler = m
	if dateOffset != 0 {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Date", time.Now().Add(dateOffset).UTC().Format(http.TimeFormat))
			m.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// closedPort is the URL of a port where a connection is refused.
func closedPort(t *testing.T) string { return "http://" + pipenet.Refused(t) }

func TestDoctor(t *testing.T) {
	const (
		goodAnthropic = "sk-ant-api03-GOODGOODGOODGOODGOOD1234"
		openaiKey     = "sk-proj-OPENAIOPENAIOPENAIOPENAI5678"
		geminiKey     = "AIzaSyGEMINIGEMINIGEMINIGEMINI9012"
	)
	badKey, _ := mock.Builtin("bad-key")
	quotaEmpty, _ := mock.Builtin("quota-empty")
	quotaOnList := &mock.Scenario{Rules: []mock.Rule{{Match: mock.Match{Endpoint: "any"}, Sequence: []mock.Step{{Kind: mock.KindInsufficientQuota}}}}}
	healthy := upstream(t, nil, 0)

	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		config  string // written to a file passed with --config; BASE is replaced by the healthy mock's URL
		code    int
		want    []string
		notWant []string
	}{
		{
			name: "good key",
			env:  map[string]string{"ANTHROPIC_API_KEY": goodAnthropic, "ANTHROPIC_BASE_URL": healthy},
			code: 0,
			want: []string{"✓ anthropic", "sk-ant-…1234 (ANTHROPIC_API_KEY)", "key accepted: 3 models listed", "all good"},
		},
		{
			name: "bad key",
			env:  map[string]string{"ANTHROPIC_API_KEY": goodAnthropic, "ANTHROPIC_BASE_URL": upstream(t, badKey, 0)},
			code: 1,
			want: []string{"✗ anthropic", "401 authentication_error", "invalid x-api-key", "fix the key in the client's env block"},
		},
		{
			name: "quota on the model listing",
			env:  map[string]string{"OPENAI_API_KEY": openaiKey, "OPENAI_BASE_URL": upstream(t, quotaOnList, 0) + "/v1"},
			code: 1,
			want: []string{"✗ openai", "429 insufficient_quota", "add credits"},
		},
		{
			name: "quota found by --probe",
			args: []string{"--probe"},
			env:  map[string]string{"OPENAI_API_KEY": openaiKey, "OPENAI_BASE_URL": upstream(t, quotaEmpty, 0) + "/v1"},
			code: 1,
			want: []string{"✗ openai", "models listed, but a 1-token request to gpt-4.1 failed", "insufficient_quota", "add credits"},
		},
		{
			name: "probe succeeds",
			args: []string{"--probe"},
			env:  map[string]string{"GEMINI_API_KEY": geminiKey, "GEMINI_BASE_URL": healthy},
			code: 0,
			want: []string{"✓ gemini", "AIza…9012 (GEMINI_API_KEY)", "a 1-token request to gemini-2.5-flash worked", "all good"},
		},
		{
			name: "unreachable base URL",
			env:  map[string]string{"ANTHROPIC_API_KEY": goodAnthropic, "ANTHROPIC_BASE_URL": closedPort(t)},
			code: 1,
			want: []string{"✗ anthropic", "base URL unreachable", "connection refused", "check the base URL"},
		},
		{
			name: "gemini key in ANTHROPIC_API_KEY",
			env:  map[string]string{"ANTHROPIC_API_KEY": geminiKey, "ANTHROPIC_BASE_URL": healthy},
			code: 1,
			want: []string{"ANTHROPIC_API_KEY looks like a key for gemini (it starts with AIza)"},
		},
		{
			name: "anthropic key in OPENAI_API_KEY",
			env:  map[string]string{"OPENAI_API_KEY": goodAnthropic, "OPENAI_BASE_URL": healthy + "/v1"},
			code: 1,
			want: []string{"OPENAI_API_KEY looks like a key for anthropic (it starts with sk-ant-)"},
		},
		{
			name: "anthropic key without sk-ant-",
			env:  map[string]string{"ANTHROPIC_API_KEY": "abcdefghijklmnopqrstuvwxyz0123", "ANTHROPIC_BASE_URL": healthy},
			code: 1,
			want: []string{"✗ ANTHROPIC_API_KEY does not start with sk-ant-"},
		},
		{
			name: "quotes pasted in",
			env:  map[string]string{"ANTHROPIC_API_KEY": `"` + goodAnthropic + `"`, "ANTHROPIC_BASE_URL": healthy},
			code: 1,
			want: []string{"ANTHROPIC_API_KEY contains quotes", "providers.anthropic.api_key"},
		},
		{
			name: "whitespace pasted in",
			env:  map[string]string{"ANTHROPIC_API_KEY": goodAnthropic + " \n", "ANTHROPIC_BASE_URL": healthy},
			code: 1,
			want: []string{"ANTHROPIC_API_KEY contains whitespace"},
		},
		{
			name: "no key at all",
			env:  map[string]string{},
			code: 1,
			want: []string{"no provider key is set", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "don't read your shell profile", `"env" block`},
		},
		{
			name: "clock skew",
			env:  map[string]string{"ANTHROPIC_API_KEY": goodAnthropic, "ANTHROPIC_BASE_URL": upstream(t, nil, -2*time.Minute)},
			code: 1,
			want: []string{"✓ anthropic", "clock skew: the local clock is 2m", "ahead of the server's Date header"},
		},
		{
			name: "small skew is fine",
			env:  map[string]string{"ANTHROPIC_API_KEY": goodAnthropic, "ANTHROPIC_BASE_URL": upstream(t, nil, 10*time.Second)},
			code: 0,
			want: []string{"all good"}, notWant: []string{"clock skew"},
		},
		{
			name:   "config file",
			env:    map[string]string{"MY_KEY": goodAnthropic},
			config: "providers:\n  claude:\n    type: anthropic\n    api_key: ${MY_KEY}\n    base_url: BASE\n",
			code:   0,
			want:   []string{"config: ", "✓ valid", "✓ claude", "sk-ant-…1234", "all good"},
		},
		{
			name:   "config file with an error",
			env:    map[string]string{"MY_KEY": goodAnthropic},
			config: "providers:\n  claude:\n    type: anthropic\n    api_key: ${MY_KEY}\n    base_url: BASE\nroutes:\n  default:\n    retry: {max_attempts: -1}\n",
			code:   1,
			want:   []string{"✗ ", "max_attempts", "✓ claude"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir) // no llmguard.yaml here
			args := append([]string{"doctor", "--timeout", "5s"}, tt.args...)
			if tt.config != "" {
				path := filepath.Join(dir, "doctor.yaml")
				if err := os.WriteFile(path, []byte(strings.ReplaceAll(tt.config, "BASE", healthy)), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", path)
			}
			var out, errb bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return tt.env[k] }}
			code := MainEnv(context.Background(), args, env)
			all := out.String() + errb.String()
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, all)
			}
			checkText(t, "output", all, tt.want, tt.notWant)
			for _, k := range []string{goodAnthropic, openaiKey, geminiKey, "GOODGOODGOOD", "OPENAIOPENAI", "GEMINIGEMINI", "abcdefghijklmnop"} {
				if strings.Contains(all, k) {
					t.Errorf("output shows a key (%q):\n%s", k, all)
				}
			}
		})
	}
}
