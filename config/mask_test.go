package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/classify"
)

func TestMaskKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"none", "none"},
		{"short", "…"},
		{"12345678", "…78"},
		{"sk-ant-api03-abcdefghijklmnopqrstuvwxyz-abcd", "sk-ant-…abcd"},
		{"sk-proj-0123456789abcdefWXYZ", "sk-…WXYZ"},
		{"AIzaSyA0123456789abcdefgh", "AIza…efgh"},
		{"gsk_0123456789abcdef9999", "gsk_…9999"},
		{"sk-or-v1-0123456789abcdef7777", "sk-or-…7777"},
		{"0123456789abcdef0123", "…0123"}, // no known prefix: the last four only
		{"Xq7mV2pL9sRt4WbN8cZk1YdF3hGj6AeU", "…6AeU"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := MaskKey(tt.in)
			if got != tt.want {
				t.Errorf("MaskKey(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if len(tt.in) > 4 && tt.in != "none" && strings.Contains(got, tt.in) {
				t.Errorf("MaskKey(%q) reveals the key", tt.in)
			}
		})
	}
}

func TestMaskURL(t *testing.T) {
	tests := []struct {
		in       string
		hidePath bool
		want     string
	}{
		{"https://api.openai.com/v1", false, "https://api.openai.com/v1"},
		{"https://user:pass@proxy.example/v1", false, "https://…@proxy.example/v1"},
		{"http://tok_4f9a8b7c6d5e@127.0.0.1:9/v1", false, "http://…@127.0.0.1:9/v1"},
		{"https://x.example/v1?api_key=secret&region=eu", false, "https://x.example/v1?api_key=%E2%80%A6&region=eu"},
		{"https://hooks.slack.com/services/T0/B0/secret", true, "https://hooks.slack.com/…"},
		{"https://hooks.example", true, "https://hooks.example"},
		{"not a url", true, "…"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := maskURL(tt.in, tt.hidePath); got != tt.want {
				t.Errorf("maskURL = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEffectiveYAMLMasksAndRoundTrips(t *testing.T) {
	c, err := Load("testdata/full.yaml", envFunc(fullEnv))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.EffectiveYAML()
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, k := range fullEnv {
		if strings.Contains(s, k) || strings.Contains(s, k[len(k)-12:]) {
			t.Errorf("effective YAML contains a key:\n%s", s)
		}
	}
	for _, want := range []string{"api_key: sk-ant-…1234 # from ${ANTHROPIC_API_KEY}", "api_key: sk-…5555 # from DEEPSEEK_API_KEY", "type: deepseek # not under providers in the file: configured from the environment", "webhook_url: https://hooks.slack.com/…", "max_total_attempts: 10", "header_timeout: 30s", "max_bytes: 67108864", "- deepseek/deepseek-chat", "failures: 8"} {
		if !strings.Contains(s, want) {
			t.Errorf("effective YAML lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(c.Providers["anthropic"].APIKey, "…") {
		t.Error("Redacted modified the original config")
	}
	// The printed config is itself a valid config (keys aside).
	path := filepath.Join(t.TempDir(), "effective.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	c2, err := Load(path, nil)
	if err != nil {
		t.Fatalf("effective YAML does not load: %v", err)
	}
	if got, want := targets(c2.Routes["cheap"]), targets(c.Routes["cheap"]); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("round trip targets %v, want %v", got, want)
	}
	if p := c2.Routes["cheap"].TargetPolicy(1); *p.Breaker.Failures != 8 || p.MaxConcurrency != 40 {
		t.Errorf("round trip override %+v", p)
	}
}

// Every secret a config holds is registered with the classifier at load,
// so Redact masks keys without a known prefix and base-URL credentials.
func TestSecretsRegisteredAtLoad(t *testing.T) {
	const mistral = "Xq7mV2pL9sRt4WbN8cZk1YdF3hGj6AeU"
	const together = "tgp7Q2wE9rT4yU1iO6pA3sD8fG5hJ0kL"
	yaml := `
providers:
  mistral: {api_key: "${MISTRAL_API_KEY}"}
  local: {type: openai-compatible, base_url: "http://tok_4f9a8b7c6d5e@127.0.0.1:9/v1", api_key: none}
  proxy: {type: openai-compatible, base_url: "https://user:p4ss-w0rd-9@proxy.example/v1?api_key=qk_77aa88bb99cc", api_key: none}
alerts:
  webhook_url: https://hooks.slack.com/services/T0AAAA/B0BBBB/xoxsecretpart1234
`
	c, err := Parse("t.yaml", []byte(yaml), envFunc(map[string]string{"MISTRAL_API_KEY": mistral, "TOGETHER_API_KEY": together}))
	if err != nil {
		t.Fatal(err)
	}
	got := c.Secrets()
	for _, want := range []string{mistral, "tok_4f9a8b7c6d5e", "p4ss-w0rd-9", "qk_77aa88bb99cc",
		"https://hooks.slack.com/services/T0AAAA/B0BBBB/xoxsecretpart1234", "/services/T0AAAA/B0BBBB/xoxsecretpart1234"} {
		if !slices.Contains(got, want) {
			t.Errorf("Secrets() = %q, lacks %q", got, want)
		}
	}
	line := classify.Redact("401 Invalid key " + mistral + " via user:p4ss-w0rd-9 posting to https://hooks.slack.com/services/T0AAAA/B0BBBB/xoxsecretpart1234")
	for _, s := range got {
		if strings.Contains(line, s) {
			t.Errorf("Redact left %q in %q", s, line)
		}
	}
}
