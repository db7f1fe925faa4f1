package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/internal/version"
)

// Issue 10 item 10: `llmguard version`, and serverInfo.version in MCP, come
// from the build info.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var stdout, stderr bytes.Buffer
		code := MainEnv(context.Background(), args, &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }})
		if code != 0 || stdout.String() != version.Get().String()+"\n" {
			t.Errorf("%v: exit %d stdout %q stderr %q, want %q", args, code, stdout.String(), stderr.String(), version.Get().String())
		}
	}
	resp, _ := runMCPSession(t, map[string]string{"HOME": t.TempDir()}, mcpInit)
	var init struct {
		Result struct {
			ServerInfo struct{ Name, Version string } `json:"serverInfo"`
		}
	}
	if err := json.Unmarshal([]byte(resp[1]), &init); err != nil {
		t.Fatal(err)
	}
	if got := init.Result.ServerInfo.Version; got != version.Get().Short() {
		t.Errorf("serverInfo.version %q, want %q", got, version.Get().Short())
	}
}
