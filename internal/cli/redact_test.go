package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	cfgPath := filepath.Join(t.TempDir(), "llmguard.yaml")
	cfg := "providers:\n  mistral: {base_url: " + echo.URL + "/v1, api_key: ${MISTRAL_API_KEY}}\n" +
		"  proxied: {type: openai-compatible, base_url: \"http://user:" + password + "@" + strings.TrimPrefix(echo.URL, "http://") + "/v1\", api_key: none}\n" +
		"routes:\n  default:\n    targets: [mistral/mistral-small-latest, proxied/llama]\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
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

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	stderr := &lockedBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- MainEnv(ctx, []string{"serve", "-v", "--addr", "127.0.0.1:0", "--config", cfgPath},
			&Env{Stdin: strings.NewReader(""), Stdout: pw, Stderr: stderr, Getenv: getenv})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no listening line: %v (stderr %s)", err, stderr)
	}
	go io.Copy(io.Discard, pr)
	_, rest, _ := strings.Cut(line, " on ")
	base, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions",
		strings.NewReader(`{"model":"default","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+gwKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	leaks("the error body", string(body))
	cancel()
	<-code
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
