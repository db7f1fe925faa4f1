package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSecretsNeverPrinted: a key without a known prefix that the upstream
// echoes, a gateway key and a base-URL password appear in no log line of
// serve -v, no config check output and no doctor row.
func TestSecretsNeverPrinted(t *testing.T) {
	const providerKey = "Xq7mV2pL9sRt4WbN8cZk1YdF3hGj6AeU"
	const gwKey = "gwk-5b6c7d8e9f0a1b2c"
	const password = "p4ss-w0rd-9z8y7x"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Invalid API key: `+r.Header.Get("Authorization")+`","type":"invalid_request_error"}}`)
	}))
	defer echo.Close()
	cfgPath := writeConfig(t, "providers:\n  mistral: {base_url: "+echo.URL+"/v1, api_key: ${MISTRAL_API_KEY}}\n"+
		"  proxied: {type: openai-compatible, base_url: \"http://user:"+password+"@"+strings.TrimPrefix(echo.URL, "http://")+"/v1\", api_key: none}\n"+
		"routes:\n  default:\n    targets: [mistral/mistral-small-latest, proxied/llama]\n")
	getenv := func(k string) string {
		switch k {
		case "MISTRAL_API_KEY":
			return providerKey
		case "LLMGUARD_GATEWAY_KEYS":
			return gwKey
		}
		return ""
	}
	leaks := func(what, out string) {
		t.Helper()
		for _, s := range []string{providerKey, providerKey[:3] + "…", providerKey[len(providerKey)-8:], gwKey, password} {
			if strings.Contains(out, s) {
				t.Errorf("%s prints a secret (%q):\n%s", what, s, out)
			}
		}
	}

	cmd, urls := startCommand(t, getenv, 1, "serve", "-v", "--addr", "127.0.0.1:0", "--config", cfgPath)
	base, stderr := urls[0], cmd.stderr
	_, body := send(t, "POST", base+"/v1/chat/completions", `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
		"Authorization", "Bearer "+gwKey)
	leaks("the error body", string(body))
	cmd.stop()
	if !strings.Contains(stderr.String(), "Invalid API key") {
		t.Errorf("serve -v did not log the failed attempt: %s", stderr)
	}
	leaks("serve -v", stderr.String())

	for _, args := range [][]string{{"config", "check", cfgPath}, {"doctor", "--config", cfgPath, "--timeout", "5s"}} {
		var out lockedBuffer
		MainEnv(context.Background(), args, &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: getenv})
		leaks(strings.Join(args[:1], " "), out.String())
	}
}
