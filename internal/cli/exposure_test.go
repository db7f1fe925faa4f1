package cli

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestOpenAddressRefused: serve off loopback without gateway keys, and mock
// off loopback, refuse to start (before listening) and say what to do.
func TestOpenAddressRefused(t *testing.T) {
	t.Chdir(t.TempDir()) // no llmguard.yaml: zero config
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"serve on every interface", []string{"serve", "--addr", "0.0.0.0:0"}, []string{"--insecure-no-auth", "LLMGUARD_GATEWAY_KEYS", "0.0.0.0:0"}},
		{"serve on empty host", []string{"serve", "--addr", ":0"}, []string{"--insecure-no-auth"}},
		{"serve admin on every interface", []string{"serve", "--addr", "127.0.0.1:0", "--admin-addr", "[::]:0"}, []string{"--admin-addr", "--insecure-no-auth"}},
		{"serve, other keys variable", []string{"serve", "--addr", "0.0.0.0:0", "--keys-env", "MY_KEYS"}, []string{"$MY_KEYS"}},
		{"mock on every interface", []string{"mock", "--addr", "0.0.0.0:0"}, []string{"--allow-remote"}},
		{"mock on empty host", []string{"mock", "--addr", ":0"}, []string{"--allow-remote"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stderr := &lockedBuffer{}
			got := MainEnv(context.Background(), tt.args, &Env{Stdin: strings.NewReader(""), Stdout: io.Discard,
				Stderr: stderr, Getenv: func(string) string { return "" }})
			if got != 2 {
				t.Errorf("exit %d, want 2; stderr %s", got, stderr)
			}
			checkText(t, "stderr", stderr.String(), tt.want, nil)
			if strings.Count(strings.TrimSpace(stderr.String()), "\n") > 0 {
				t.Errorf("want one line, got: %s", stderr)
			}
		})
	}
}

func TestExposure(t *testing.T) {
	tests := []struct {
		addr, admin string
		keys        int
		insecure    bool
		warn, err   bool
	}{
		{"127.0.0.1:8080", "", 0, false, false, false},
		{"localhost:8080", "", 0, false, false, false},
		{"[::1]:8080", "127.0.0.2:9090", 0, false, false, false},
		{"0.0.0.0:8080", "", 0, false, false, true},
		{":8080", "", 0, false, false, true},
		{"192.0.2.10:8080", "", 0, false, false, true},
		{"0.0.0.0:8080", "", 1, false, false, false},
		{"0.0.0.0:8080", "", 0, true, true, false},
		{"127.0.0.1:8080", "0.0.0.0:9090", 0, false, false, true},
		{"127.0.0.1:8080", "0.0.0.0:9090", 2, false, false, false},
	}
	for _, tt := range tests {
		warn, err := exposure(tt.addr, tt.admin, tt.keys, tt.insecure, "LLMGUARD_GATEWAY_KEYS")
		if (warn != "") != tt.warn || (err != nil) != tt.err {
			t.Errorf("exposure(%q, %q, %d, %v) = %q, %v", tt.addr, tt.admin, tt.keys, tt.insecure, warn, err)
		}
	}
}

// TestServeAllowOrigin: serve admits loopback pages and --allow-origin
// ones, refuses other pages, and refuses the body types a page can POST
// without a preflight; /status needs the gateway key when keys are set.
func TestServeAllowOrigin(t *testing.T) {
	cmd, urls := startCommand(t, nil, 1, "serve", "--addr", "127.0.0.1:0", "--config", mockConfig(t),
		"--allow-origin", "https://app.example")
	base := urls[0]
	for _, tt := range []struct {
		origin, ct string
		want       int
	}{
		{"https://app.example", "application/json", 200},
		{"http://localhost:3000", "application/json", 200},
		{"", "application/json", 200},
		{"https://evil.example", "application/json", 403},
		{"", "text/plain", 415},
	} {
		if status, b := postMessage(t, base, "Content-Type", tt.ct, "Origin", tt.origin); status != tt.want {
			t.Errorf("origin %q, %s: status %d, want %d: %s", tt.origin, tt.ct, status, tt.want, b)
		}
	}
	if c := cmd.stop(); c != 0 {
		t.Errorf("exit %d; stderr %s", c, cmd.stderr)
	}
}
