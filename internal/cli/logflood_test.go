package cli

import (
	"strings"
	"testing"
)

// TestOutageDoesNotFloodTheLog: during an outage every request fails the
// same way; serve logs that failure once per interval with a count (the
// issue's run logged a warn line per request: 105 MB in 30 s).
func TestOutageDoesNotFloodTheLog(t *testing.T) {
	cfgPath := writeConfig(t, "providers:\n  openai: {base_url: "+closedPort(t)+"/v1, api_key: test-key-0000}\n"+
		"routes:\n  default:\n    targets: [openai/gpt-4o]\n    retry: {max_attempts: 1}\n    breaker: {failures: 1000000}\n")
	cmd, urls := startCommand(t, nil, 1, "serve", "--addr", "127.0.0.1:0", "--config", cfgPath)
	base, stderr := urls[0], cmd.stderr
	const n = 300
	for range n {
		res, _ := send(t, "POST", base+"/v1/chat/completions", `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
			"Content-Type", "application/json")
		if res.StatusCode < 500 {
			t.Fatalf("status %d during an outage", res.StatusCode)
		}
	}
	cmd.stop()
	var warns, access int
	for _, l := range strings.Split(stderr.String(), "\n") {
		switch {
		case strings.Contains(l, "level=WARN"):
			warns++
		case strings.Contains(l, "msg=access"):
			access++
		}
	}
	t.Logf("%d failed requests: %d warn lines, %d access lines", n, warns, access)
	if warns > 5 {
		t.Errorf("%d warn lines for %d identical failures, want a few", warns, n)
	}
	if !strings.Contains(stderr.String(), "repeated=") {
		t.Errorf("the count of held-back failures is never logged:\n%.2000s", stderr)
	}
}
