package config

import (
	"strings"
	"testing"
)

func TestSuggestKey(t *testing.T) {
	tests := []struct{ path, key, want string }{
		{"routes.default.retry.max_atempts", "max_atempts", ` (did you mean "max_attempts"?)`},
		{"routes.x.targets[0].retri", "retri", ` (did you mean "retry"?)`},
		{"providers.anthropic.key", "key", " (known: type, api_key, base_url, api_version, model)"},
		{"alerts.slack", "slack", " (known: webhook_url)"},
		{"pricing.openai/gpt-4.1.inn", "inn", ""}, // dotted map key: no suggestion, no panic
		{"zzz", "zzz", " (known: " + strings.Join([]string{"providers", "default_provider", "routes", "pricing", "models", "alerts", "mcp", "mcp_upstreams", "state"}, ", ") + ")"},
		{"routes.a.targets[x].y", "y", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := suggestKey(tt.path, tt.key); got != tt.want {
				t.Errorf("suggestKey = %q, want %q", got, tt.want)
			}
		})
	}
}
