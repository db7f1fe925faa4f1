package classify_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/classify"
)

// Keys with no known prefix (Mistral, Azure, Together, OpenAI-compatible
// servers) are redacted by value once registered; a token in a URL's user
// info is redacted whether registered or not.
func TestRedactSecrets(t *testing.T) {
	const mistral = "Xq7mV2pL9sRt4WbN8cZk1YdF3hGj6AeU" // no known prefix
	const azure = "0f3a9c1e7b2d4f6a8c0e2b4d6f8a0c1e"
	classify.AddSecrets(mistral, azure, "short", "")
	tests := []struct{ in, want string }{
		{"Invalid API key: " + mistral + ".", "Invalid API key: ***."},
		{"key=" + azure + "&x=1", "key=***&x=1"},
		{mistral + mistral, "******"},
		{`Post "http://tok_4f9a8b7c6d5e@127.0.0.1:1/v1/chat/completions": dial tcp`, `Post "http://***@127.0.0.1:1/v1/chat/completions": dial tcp`},
		{"https://user:p4ss-w0rd@proxy.example/v1 refused", "https://***@proxy.example/v1 refused"},
		{"mail me at someone@example.com", "mail me at someone@example.com"},
		{"see http://example.com/@user for details", "see http://example.com/@user for details"},
		{"a short word stays", "a short word stays"},
		{"sk-ant-api03-AbCdEfGhIjKlMnOpQrSt and " + mistral, "sk-ant-*** and ***"},
	}
	for _, tt := range tests {
		if got := classify.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A registered key echoed by an upstream never reaches a verdict: not in
// the message, the provider type or the request id.
func TestVerdictRedactsRegisteredKey(t *testing.T) {
	const key = "tgp7Q2wE9rT4yU1iO6pA3sD8fG5hJ0kL" // a Together-style key without prefix
	classify.AddSecrets(key)
	for _, in := range []classify.Input{
		{Provider: "together", Status: 401, Body: []byte(`{"error":{"message":"Invalid API key provided: ` + key + `","type":"invalid_request_error","code":"invalid_api_key"}}`)},
		{Provider: "mistral", Status: 401, Body: []byte(`<html><body>Unauthorized ` + key + `</body></html>`), Header: http.Header{"Content-Type": {"text/html"}}},
		{Provider: "openai-compatible", Status: 500, Body: []byte(`internal error for key ` + key)},
		{Provider: "azure", Err: errors.New(`Post "https://` + key + `@x.openai.azure.com/": EOF`)},
	} {
		v := classify.Classify(in)
		b, _ := v.MarshalJSON()
		if strings.Contains(string(b), key) || strings.Contains(string(b), key[:12]) {
			t.Errorf("verdict carries the key: %s", b)
		}
	}
}

// Every log line through RedactHandler has registered secrets masked, in
// the message and in every attribute.
func TestRedactHandler(t *testing.T) {
	const key = "Mz8Kq1Xw4Rv7Tn2Yb5Lc9Pd3Hs6Gf0Ja"
	classify.AddSecrets(key)
	var buf bytes.Buffer
	log := slog.New(classify.RedactHandler(slog.NewTextHandler(&buf, nil)))
	log.With("base", "http://"+key+"@host/v1").WithGroup("g").Warn("call failed with "+key,
		"err", errors.New("bad key "+key), "n", 3, slog.Group("inner", "k", key))
	if strings.Contains(buf.String(), key) {
		t.Errorf("log line carries the key: %s", buf.String())
	}
	if !strings.Contains(buf.String(), "n=3") || !strings.Contains(buf.String(), "call failed with ***") {
		t.Errorf("log line lost its content: %s", buf.String())
	}
}

// Line is the one shortener for every line llmguard shows: whitespace
// collapsed, cut to MaxLine bytes on a rune boundary.
func TestLine(t *testing.T) {
	long := strings.Repeat("é", 1100) // 2200 bytes: cut on a rune boundary at 2 KiB
	for _, tc := range []struct{ in, want string }{
		{"a\nb\r\n\tc", "a b c"},
		{long, long[:2048] + "…"},
	} {
		if got := classify.Line(tc.in); got != tc.want {
			t.Errorf("classify.Line(%.20q) = %.40q, want %.40q", tc.in, got, tc.want)
		}
	}
}
