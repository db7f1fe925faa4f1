package mcpserver

import (
	"strings"
	"testing"
)

// The agent is told the same truth as a gateway client: a bad key is the
// provider's 401 on every call while the key's breaker holds it (with the
// original request id and when it was first seen), never "every target is
// skipped"; a request rejected on a route with more targets is the
// request's fault, and its line says so.
func TestTruthForAgents(t *testing.T) {
	t.Run("bad key", func(t *testing.T) {
		r := newRig(t, []string{"openai/gpt-4o+fault=401", "anthropic/claude-sonnet-4-5+fault=401"}, nil, nil)
		cs := r.connect(t, nil, nil)
		var rid string
		for i := range 3 {
			line := errorLine(t, callTool(t, cs, "ask", map[string]any{"prompt": "hello"}))
			t.Logf("call %d: %s", i+1, line)
			if i == 0 {
				rid = r.upstream()[0].RequestID
			} else {
				wantAll(t, line, "first seen")
			}
			wantAll(t, line, "401", "Incorrect API key provided", rid, "anthropic/claude-sonnet-4-5")
			if strings.Contains(line, "skipped") || strings.Contains(line, "retry after") || strings.Contains(line, "retry in") {
				t.Errorf("call %d: %q reads like an outage", i+1, line)
			}
		}
		if n := len(r.upstream()); n != 2 {
			t.Errorf("%d upstream requests over 3 calls, want 2 (one per key)", n)
		}
	})
	t.Run("repeat of a call retried to exhaustion", func(t *testing.T) {
		r := newRig(t, []string{"anthropic/claude-sonnet-4-5+fault=529"}, nil, nil)
		cs := r.connect(t, nil, nil)
		first := errorLine(t, callTool(t, cs, "ask", map[string]any{"prompt": "hello"}))
		again := errorLine(t, callTool(t, cs, "ask", map[string]any{"prompt": "hello"}))
		t.Logf("first: %s\nagain: %s", first, again)
		wantAll(t, again, "529", "overloaded", r.upstream()[3].RequestID, "repeat of a call that failed at",
			"after 4 upstream attempts", "; retry after ")
		if strings.Contains(again, "retry in a minute") || strings.Count(again, "attempts") != 1 {
			t.Errorf("the repeat's advice is sooner than its hold's end: %q", again)
		}
		if n := len(r.upstream()); n != 4 {
			t.Errorf("%d upstream requests over 2 calls, want 4 (the repeat is held)", n)
		}
	})
	t.Run("invalid request", func(t *testing.T) {
		r := newRig(t, []string{"anthropic/claude-sonnet-4-5+fault=400", "openai/gpt-4o"}, nil, nil)
		cs := r.connect(t, nil, nil)
		line := errorLine(t, callTool(t, cs, "ask", map[string]any{"prompt": "hello"}))
		t.Log(line)
		wantAll(t, line, "400", "invalid_request_error", r.upstream()[0].RequestID)
		if len(r.upstream()) != 1 || strings.Contains(line, "retry after") || strings.Contains(line, "retry in") {
			t.Errorf("%d upstream requests; line %q", len(r.upstream()), line)
		}
	})
}
