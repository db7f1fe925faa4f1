package gateway

import (
	"strconv"
	"strings"
	"testing"
)

const costConfig = mockProviders + `pricing:
  openai/gpt-4.1-mini+fault=midstream:0: {in: 0.4, out: 1.6}
routes:
  cascade:
    targets: ["openai/gpt-4.1-mini+fault=midstream:0", anthropic/claude-opus-4-1, openai/gpt-4.1]
    retry: {max_attempts: 1}
    max_cost_usd: 0.5
`

// TestSpendCeilingHeaders: x-llmguard-max-cost lowers the route's ceiling
// for one request (the cascade skips the dear model), the answer says what
// it cost and what the failed attempt wasted, and a bad value is a 400
// naming the header.
func TestSpendCeilingHeaders(t *testing.T) {
	st := newStackConfig(t, costConfig, nil)
	long := strings.Repeat("a long document ", 250)
	body := `{"model":"cascade","max_tokens":200,"messages":[{"role":"user","content":"` + long + `"}]}`
	for _, tc := range []struct {
		name, ceiling, target string
		stream                bool
	}{
		{"route ceiling", "", "anthropic/claude-opus-4-1", false},
		{"request ceiling", "0.02", "openai/gpt-4.1", false},
		{"request ceiling, stream", "0.02", "openai/gpt-4.1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := body
			if tc.stream {
				b = strings.Replace(b, `"max_tokens"`, `"stream":true,"max_tokens"`, 1)
			}
			var hdr []string
			if tc.ceiling != "" {
				hdr = []string{"X-Llmguard-Max-Cost", tc.ceiling}
			}
			r := st.post(t, "/v1/chat/completions", b, hdr...)
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if got := r.header.Get("X-Llmguard-Target"); got != tc.target {
				t.Errorf("target %s, want %s", got, tc.target)
			}
			wasted, err := strconv.ParseFloat(r.header.Get("X-Llmguard-Wasted-Usd"), 64)
			if err != nil || wasted < 0.0003 || wasted > 0.0006 {
				t.Errorf("x-llmguard-wasted-usd %q, want about 0.0004", r.header.Get("X-Llmguard-Wasted-Usd"))
			}
			cost := r.header.Get("X-Llmguard-Cost-Usd")
			if c, err := strconv.ParseFloat(cost, 64); tc.stream != (cost == "") || (!tc.stream && (err != nil || c <= 0)) {
				t.Errorf("x-llmguard-cost-usd %q (stream %v)", cost, tc.stream)
			}
		})
	}
	t.Run("nothing fits", func(t *testing.T) {
		r := st.post(t, "/v1/chat/completions", body, "X-Llmguard-Max-Cost", "0.001")
		if r.status == 200 || !strings.Contains(string(r.body), "max_cost_usd") {
			t.Errorf("status %d body %s: want a failure naming the ceiling", r.status, r.body)
		}
		if r.header.Get("X-Llmguard-Wasted-Usd") == "" {
			t.Error("no x-llmguard-wasted-usd on the failure")
		}
	})
	t.Run("nothing affordable", func(t *testing.T) {
		r := st.post(t, "/v1/chat/completions", body, "X-Llmguard-Max-Cost", "0.00001")
		if r.status != 400 || r.header.Get("X-Should-Retry") != "false" || !strings.Contains(string(r.body), "max_cost_usd") {
			t.Errorf("status %d x-should-retry %q body %s: want 400, no retry, naming the ceiling", r.status, r.header.Get("X-Should-Retry"), r.body)
		}
	})
	for _, bad := range []string{"cheap", "-1", "0", "NaN"} {
		r := st.post(t, "/v1/chat/completions", body, "X-Llmguard-Max-Cost", bad)
		if r.status != 400 || !strings.Contains(string(r.body), "x-llmguard-max-cost") {
			t.Errorf("x-llmguard-max-cost %q: status %d body %s, want 400 naming the header", bad, r.status, r.body)
		}
	}
}
