package mcpserver

import (
	"strings"
	"testing"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/mock"
)

// TestSpendCeilingArgument: the tools' max_cost_usd lowers the route's
// spend ceiling (the cascade skips the dear model), and the structured
// content says what the answer cost and what the failed attempt wasted.
func TestSpendCeilingArgument(t *testing.T) {
	sc := &mock.Scenario{Rules: []mock.Rule{{Match: mock.Match{Model: "gpt-4.1-mini"},
		Sequence: []mock.Step{{Kind: mock.KindMidstream, Arg: 0, HasArg: true}}}}}
	r := newRigScenario(t, sc, []string{"openai/gpt-4.1-mini", "anthropic/claude-opus-4-1", "openai/gpt-4.1"}, nil,
		func(rt *config.Route) { rt.Retry.MaxAttempts = 1 })
	cs := r.connect(t, nil, nil)
	prompt := strings.Repeat("a long document ", 250)
	res := callOK(t, cs, "ask", map[string]any{"prompt": prompt, "max_tokens": 200, "max_cost_usd": 0.02}, "")
	got := structured(t, res)
	if got["model"] != "openai/gpt-4.1" {
		t.Errorf("answered by %v, want openai/gpt-4.1 (claude-opus-4-1 is over the ceiling)", got["model"])
	}
	if w, _ := got["wasted_usd"].(float64); w < 0.0003 || w > 0.0006 {
		t.Errorf("wasted_usd %v, want about 0.0004", got["wasted_usd"])
	}
	if c, _ := got["cost_usd"].(float64); c <= 0 {
		t.Errorf("cost_usd %v", got["cost_usd"])
	}
	res = callTool(t, cs, "ask", map[string]any{"prompt": "hi", "max_cost_usd": 0.00001})
	if !res.IsError || !strings.Contains(text(t, res), "raise max_cost_usd") {
		t.Errorf("a ceiling nothing fits: %s, want the line saying to raise it", text(t, res))
	}
	res = callTool(t, cs, "ask", map[string]any{"prompt": "hi", "max_cost_usd": -1})
	if !res.IsError || !strings.Contains(text(t, res), "max_cost_usd") {
		t.Errorf("max_cost_usd -1: %s, want an error naming the argument", text(t, res))
	}
}
