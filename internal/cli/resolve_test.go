package cli

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/llmguard/llmguard/mock"
)

// Issue 10 item 7 for MCP: a tool's route may be a bare model id that the
// zero-config route serves; one nothing serves says both ways to fix it.
func TestMCPBareModelRoute(t *testing.T) {
	ms := httptest.NewServer(mock.New(nil))
	defer ms.Close()
	vars := map[string]string{"HOME": t.TempDir(), "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": ms.URL + "/v1"}
	resp, stderr := runMCPSession(t, vars, mcpInit, mcpInitialized,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{"prompt":"hi","route":"gpt-4.1"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","arguments":{"prompt":"hi","route":"gpt-5"}}}`)
	type result struct {
		Result struct {
			IsError           bool `json:"isError"`
			Content           []struct{ Text string }
			StructuredContent struct{ Model string } `json:"structuredContent"`
		}
	}
	var ok, bad result
	if err := json.Unmarshal([]byte(resp[2]), &ok); err != nil {
		t.Fatal(err)
	}
	if ok.Result.IsError || ok.Result.StructuredContent.Model != "openai/gpt-4.1" {
		t.Errorf("route gpt-4.1: %s (stderr %s)", resp[2], stderr)
	}
	if err := json.Unmarshal([]byte(resp[3]), &bad); err != nil {
		t.Fatal(err)
	}
	if !bad.Result.IsError || len(bad.Result.Content) != 1 {
		t.Fatalf("route gpt-5: want one isError line, got %s", resp[3])
	}
	checkText(t, "route gpt-5's error line", bad.Result.Content[0].Text, []string{`"gpt-5"`, "default", "openai/gpt-5", "default_provider"}, nil)
}
