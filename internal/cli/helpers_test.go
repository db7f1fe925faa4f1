package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/internal/syncbuf"
	"github.com/llmguard/llmguard/mock"
)

// lockedBuffer is the goroutine-safe buffer for a command's stderr.
type lockedBuffer = syncbuf.Buffer

// checkText fails the test for each string of want that got (named what in
// the messages) lacks and each of not that it has.
func checkText(t *testing.T, what, got string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
	for _, w := range not {
		if strings.Contains(got, w) {
			t.Errorf("%s has %q:\n%s", what, w, got)
		}
	}
}

// waitLog waits up to 10s for re to match what log holds and returns its
// first submatch; the test fails, naming what, if it never does.
func waitLog(t *testing.T, log *lockedBuffer, re *regexp.Regexp, what string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if m := re.FindStringSubmatch(log.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in stderr:\n%s", what, log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// running is a subcommand started by startCommand.
type running struct {
	stderr *lockedBuffer
	code   chan int
	cancel context.CancelFunc
}

// stop ends the command (its context is cancelled) and returns its exit code.
func (c *running) stop() int { c.cancel(); return <-c.code }

// startCommand runs `llmguard args...` (MainEnv, with getenv; nil is an
// empty environment) until stop or the end of the test, reads the first
// nURLs lines of its stdout ("... on http://ADDR ...") and returns those
// URLs; the rest of stdout is discarded.
func startCommand(t *testing.T, getenv func(string) string, nURLs int, args ...string) (*running, []string) {
	t.Helper()
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	c := &running{stderr: &lockedBuffer{}, code: make(chan int, 1), cancel: cancel}
	go func() {
		c.code <- MainEnv(ctx, args, &Env{Stdin: strings.NewReader(""), Stdout: pw, Stderr: c.stderr, Getenv: getenv})
		pw.Close()
	}()
	t.Cleanup(cancel)
	rd := bufio.NewReader(pr)
	var urls []string
	for range nURLs {
		line, err := rd.ReadString('\n')
		if err != nil {
			cancel()
			t.Fatalf("no listening line: %v (stderr %s)", err, c.stderr)
		}
		_, rest, ok := strings.Cut(line, " on ")
		if !ok {
			t.Fatalf("line %q", line)
		}
		u, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
		urls = append(urls, u)
	}
	go io.Copy(io.Discard, rd)
	return c, urls
}

// mockConfig starts a healthy mock for the test and writes a config file
// with an anthropic provider on it (key test-key) and a default route to
// anthropic/claude-sonnet-4-5; it returns the file's path.
func mockConfig(t *testing.T) string {
	t.Helper()
	ms := httptest.NewServer(mock.New(nil))
	t.Cleanup(ms.Close)
	return writeConfig(t, "providers:\n  anthropic: {base_url: "+ms.URL+", api_key: test-key}\n"+
		"routes:\n  default:\n    targets: [anthropic/claude-sonnet-4-5]\n")
}

// writeConfig writes cfg to a llmguard.yaml in a temporary directory and
// returns its path.
func writeConfig(t *testing.T, cfg string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "llmguard.yaml")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// send makes one request to url with body ("" sends none) and header
// (name, value pairs; a pair with an empty value is left out) and returns
// the answer and its body, read and closed; a transport error fails the
// test.
func send(t *testing.T, method, url, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	var kept []string
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] != "" {
			kept = append(kept, header[i], header[i+1])
		}
	}
	res := pipenet.Do(t, http.DefaultClient, method, url, body, kept...)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, b
}

// postMessage posts a one-message Anthropic request for the default route
// to base's /v1/messages with header (as for send) and returns the status
// and body.
func postMessage(t *testing.T, base string, header ...string) (int, []byte) {
	t.Helper()
	res, b := send(t, "POST", base+"/v1/messages", `{"model":"default","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, header...)
	return res.StatusCode, b
}
