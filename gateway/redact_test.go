package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/internal/pipenet"
)

// echoKey is an upstream that quotes the caller's key in its 401, as some
// OpenAI-compatible servers do.
func echoKey() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Invalid API key provided: ` + key + `","type":"invalid_request_error","code":"invalid_api_key"}}`))
	})
}

// TestKeysRedactedByValue: keys without a known prefix (Mistral, Together,
// OpenAI-compatible) and tokens in base URLs never reach an error body or
// /status, whatever the upstream echoes.
func TestKeysRedactedByValue(t *testing.T) {
	const mistralKey = "Xq7mV2pL9sRt4WbN8cZk1YdF3hGj6AeU"
	const urlToken = "tok_4f9a8b7c6d5e3a2b"
	echo := httptest.NewServer(echoKey())
	defer echo.Close()
	closed := pipenet.Refused(t) // a port nothing listens on
	st := newStackConfig(t, `
providers:
  mistral: {base_url: `+echo.URL+`/v1, api_key: `+mistralKey+`}
  local: {type: openai-compatible, base_url: "http://`+urlToken+`@`+closed+`/v1", api_key: none}
routes:
  default:
    targets: [mistral/mistral-small-latest]
  local:
    targets: [local/llama]
    retry: {max_attempts: 1}
`, nil)
	first := st.post(t, "/v1/chat/completions", oaBody("default", false, ""))
	if !strings.Contains(string(first.body), "Invalid API key provided: ***") {
		t.Errorf("the upstream's message is not kept (masked): %s", first.body)
	}
	for _, r := range []reply{
		first,
		st.post(t, "/v1/messages", anBody("default", false, "")),
		st.post(t, "/v1/chat/completions", oaBody("local", false, "")),
		st.send(t, "GET", "/status", "", nil),
	} {
		for _, secret := range []string{mistralKey, mistralKey[:12], urlToken} {
			if strings.Contains(string(r.body), secret) {
				t.Errorf("status %d body carries a secret: %s", r.status, r.body)
			}
			for k, vs := range r.header {
				if strings.Contains(strings.Join(vs, " "), secret) {
					t.Errorf("header %s carries a secret: %q", k, vs)
				}
			}
		}
	}
}
