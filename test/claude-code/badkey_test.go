package claudecode

import (
	"strings"
	"testing"
	"time"
)

// TestClaudeCodeBadKey runs Claude Code twice through the gateway while
// the upstream key is bad: each run reports the invalid key after one
// request and never sees a 503: the gateway answers the original 401, also
// while the key's breaker is open, so Claude Code (which retries a 503 or
// a 529 with backoff, for minutes) stops at once. What counts is the one
// request, not the time: under load Claude Code's own start-up can take
// seconds (its duration_ms is logged).
func TestClaudeCodeBadKey(t *testing.T) {
	claude, _ := claudeBinary(t)
	for _, md := range models {
		t.Run(md.name, func(t *testing.T) {
			t.Parallel()
			st := startClaudeStack(t, "bad-key")
			ws := newWorkspace(t)
			for _, run := range []string{"first run", "second run"} {
				res, took := ws.run(t, claude, st.rec, st.rec.URL, gatewayKey, 30*time.Second, "Say hello", md.args...)
				got := statuses(st.rec.take())
				if !res.IsError || res.APIErrorStatus == nil || *res.APIErrorStatus != 401 ||
					!strings.Contains(res.Result, "Invalid API key") {
					t.Errorf("%s: result %+v, want is_error, api_error_status 401, \"Invalid API key\"", run, res)
				}
				if len(got) != 1 {
					t.Errorf("%s: Claude Code sent %d requests to the gateway (statuses %v), want one: a retry means the gateway's answer told it to", run, len(got), got)
				}
				for _, s := range got {
					if s != 401 {
						t.Errorf("%s: gateway statuses %v, want only 401", run, got)
						break
					}
				}
				t.Logf("%s: duration_ms %d, process %v, gateway statuses %v", run, res.DurationMS, took.Round(time.Millisecond), got)
			}
			up := st.upstream()
			if len(up) == 0 || len(up) > 2 {
				t.Errorf("upstream attempts %q, want one per run at most", up)
			}
			t.Logf("upstream attempts over both runs: %d (%s)", len(up), strings.Join(up, ", "))
		})
	}
}
