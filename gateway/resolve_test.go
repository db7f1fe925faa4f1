package gateway

import (
	"strings"
	"testing"
)

// Issue 10 item 7: a bare model id that a route's target serves goes to that
// target (no default_provider needed), and the 404 for one that nothing
// serves names both ways to fix it.
func TestBareModelResolvesToRouteTarget(t *testing.T) {
	st := newStack(t, nil)
	for _, tt := range []struct{ path, body, target string }{
		{"/v1/chat/completions", oaBody("gpt-4o", false, ""), "openai/gpt-4o"},
		{"/v1/messages", anBody("claude-sonnet-4-5", false, ""), "anthropic/claude-sonnet-4-5"},
		{"/v1/chat/completions", oaBody("gpt-4o", true, ""), "openai/gpt-4o"},
		{"/v1/messages", anBody("oai", false, `,"fallbacks":["claude-sonnet-4-5"]`), "openai/gpt-4o"},
	} {
		r := st.post(t, tt.path, tt.body)
		if r.status != 200 || r.header.Get("X-Llmguard-Target") != tt.target {
			t.Errorf("%s %s: status %d target %q, want 200 %q: %s", tt.path, tt.body, r.status, r.header.Get("X-Llmguard-Target"), tt.target, r.body)
		}
	}

	r := st.post(t, "/v1/chat/completions", oaBody("gpt-5", false, ""))
	if r.status != 404 {
		t.Fatalf("unknown bare model: status %d: %s", r.status, r.body)
	}
	msg, _ := dig(decodeJSON(t, r.body), "error", "message").(string)
	for _, want := range []string{`"gpt-5"`, "ant, ", "provider/model", "default_provider"} {
		if !strings.Contains(msg, want) {
			t.Errorf("404 message %q lacks %q", msg, want)
		}
	}
}
