package config

import (
	"strings"
	"testing"

	"github.com/llmguard/llmguard/provider"
)

func TestTransport(t *testing.T) {
	for _, tt := range []struct {
		name, routes string
		want         provider.TransportConfig
	}{
		{"unlimited target", `{default: {targets: [openai/gpt-4o]}}`,
			provider.TransportConfig{MaxIdleConnsPerHost: DefaultIdleConns, MaxIdleConns: DefaultIdleConns}},
		{"the route's max_concurrency", `{default: {targets: [openai/gpt-4o, anthropic/claude-sonnet-4-5], max_concurrency: 20}}`,
			provider.TransportConfig{MaxIdleConnsPerHost: 20, MaxIdleConns: 40}},
		{"a target's max_concurrency and max_idle_conns", `{default: {targets: [{target: openai/gpt-4o, max_concurrency: 30}, {target: openai/gpt-4o-mini, max_concurrency: 30, max_idle_conns: 100}], max_idle_conns: 5}}`,
			provider.TransportConfig{MaxIdleConnsPerHost: 105, MaxIdleConns: 105}}, // the route's 5 replaces gpt-4o's 30
		{"the route's max_idle_conns over max_concurrency", `{default: {targets: [openai/gpt-4o], max_concurrency: 30, max_idle_conns: 300}}`,
			provider.TransportConfig{MaxIdleConnsPerHost: 300, MaxIdleConns: 300}},
		{"one target in two routes counts once, with its largest", `{default: {targets: [openai/gpt-4o], max_concurrency: 10}, b: {targets: [openai/gpt-4o], max_idle_conns: 40}}`,
			provider.TransportConfig{MaxIdleConnsPerHost: 40, MaxIdleConns: 40}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("t.yaml", []byte("providers:\n  openai: {api_key: k}\n  anthropic: {api_key: k}\nroutes: "+tt.routes+"\n"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Transport(); *got != tt.want {
				t.Errorf("Transport() = %+v, want %+v", *got, tt.want)
			}
		})
	}
	cfg, err := Parse("t.yaml", []byte("providers:\n  openai: {api_key: k}\nroutes: {default: {targets: [{target: openai/gpt-4o, max_idle_conns: -1}], max_idle_conns: -2}}\n"), nil)
	if err == nil {
		err = cfg.Validate()
	}
	for _, want := range []string{"routes.default.max_idle_conns: must not be negative", "routes.default.targets[0].max_idle_conns: must not be negative"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
}
