package mcpserver

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeError(t *testing.T) {
	cs := connect(t, nil, nil)
	for _, tc := range []struct {
		name string
		args map[string]any
		want map[string]any // a subset of the verdict
	}{
		{"anthropic overloaded", map[string]any{"status": 529, "provider": "anthropic",
			"headers": map[string]string{"request-id": "req_011CUabc"},
			"body":    `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CUabc"}`},
			map[string]any{"class": "overloaded", "retryable": true, "provider_type": "overloaded_error", "request_id": "req_011CUabc"}},
		{"openai insufficient_quota", map[string]any{"status": 429, "provider": "openai",
			"body": `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`},
			map[string]any{"class": "quota_exhausted", "retryable": false, "scope": "key"}},
		{"rate limit wait", map[string]any{"status": 429, "provider": "anthropic", "headers": map[string]string{"retry-after": "14"},
			"body": `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`},
			map[string]any{"class": "rate_limited", "wait_seconds": 14.0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := callTool(t, cs, "decode_error", tc.args)
			if res.IsError {
				t.Fatalf("decode_error failed: %s", text(t, res))
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(text(t, res)), &got); err != nil {
				t.Fatalf("text is not the verdict JSON: %v", err)
			}
			keys := slices.Sorted(maps.Keys(got))
			wantKeys := []string{"class", "fallback", "message", "provider_type", "request_id", "retryable", "scope", "until", "wait_seconds"}
			if diff := cmp.Diff(wantKeys, keys); diff != "" {
				t.Errorf("keys differ from decode --json (-want +got):\n%s", diff)
			}
			for k, v := range tc.want {
				if !cmp.Equal(got[k], v) {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
			if sc, _ := json.Marshal(res.StructuredContent); !cmp.Equal(json.RawMessage(sc), json.RawMessage(text(t, res)), cmp.Comparer(jsonEqual)) {
				t.Errorf("structured content %s differs from text %s", sc, text(t, res))
			}
		})
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && cmp.Equal(x, y)
}
