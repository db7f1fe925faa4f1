package mcpserver

import (
	"testing"

	"github.com/llmguard/llmguard/telemetry"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"strings"
)

// TestMetrics: each LLM tool call counts as a request of dialect mcp, with
// its tokens.
func TestMetrics(t *testing.T) {
	r := newRig(t, []string{"anthropic/claude-sonnet-4-5"}, nil, nil)
	m := telemetry.New(&telemetry.Options{Routes: map[string][]string{"default": {"anthropic/claude-sonnet-4-5"}}})
	r.cfg.Metrics = m
	cs := r.connect(t, nil, nil)
	if res := callTool(t, cs, "ask", map[string]any{"prompt": "What is llmguard?", "max_tokens": 50}); res.IsError {
		t.Fatalf("ask failed: %s", text(t, res))
	}
	want := `
# HELP llmguard_requests_total API requests and tool calls by route, answering target, dialect and outcome (success, cached, static, error, canceled).
# TYPE llmguard_requests_total counter
llmguard_requests_total{dialect="mcp",outcome="success",route="default",target="anthropic/claude-sonnet-4-5"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "llmguard_requests_total"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(m.Registry(), "gen_ai_client_token_usage"); err != nil || n != 2 {
		t.Errorf("gen_ai_client_token_usage: %d series (%v), want 2 (input, output)", n, err)
	}
}
