package resilience

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/config"
)

func TestChatRetryThenFallback(t *testing.T) {
	h := newHarness(t, map[string]*config.Route{
		"default": {Targets: targets("a/m1", "b/m2"), Retry: config.Retry{MaxAttempts: 2}},
	}, nil)
	h.ads["a"].on("m1", reply{err: errOverloaded})
	res, err := h.chat("default")
	if err != nil {
		t.Fatal(err)
	}
	if res.Target != "b/m2" || res.Attempts != 3 || res.Fallbacks != 1 || res.Response.Text != "ok from m2" {
		t.Errorf("result = %+v", res)
	}
	want := []string{"attempt a/m1", "failure a/m1", "retry a/m1", "attempt a/m1", "failure a/m1",
		"fallback b/m2", "attempt b/m2", "success b/m2"}
	if diff := cmp.Diff(want, h.kinds()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := h.ads["a"].Calls("m1"); got != 2 {
		t.Errorf("a/m1 calls = %d, want 2", got)
	}
}
