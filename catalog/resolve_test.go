package catalog

import (
	"errors"
	"strings"
	"testing"
)

func TestResolveModel(t *testing.T) {
	c := &Catalog{Providers: map[string]string{"openai": "", "anthropic": "", "openrouter": ""}}
	routes := map[string][]string{
		"default": {"openai/gpt-4.1", "anthropic/claude-sonnet-4-5"},
		"cheap":   {"openrouter/meta-llama/llama-3-70b", "anthropic/claude-haiku-4-5"},
		"zzz":     {"openrouter/gpt-4.1"}, // another target of the same bare id: "default" wins
	}
	tests := []struct{ name, want string }{
		{"default", "default"}, // a route
		{"cheap", "cheap"},     // a route
		{"anthropic/claude-opus-4-1", "anthropic/claude-opus-4-1"},      // a configured provider's target
		{"gpt-4.1", "openai/gpt-4.1"},                                   // a bare id a route serves
		{"claude-haiku-4-5", "anthropic/claude-haiku-4-5"},              // served by a route other than default
		{"meta-llama/llama-3-70b", "openrouter/meta-llama/llama-3-70b"}, // a slashed id whose "provider" is not configured
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.ResolveModel(tt.name, routes)
			if err != nil || got != tt.want {
				t.Errorf("ResolveModel(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
			}
		})
	}

	_, err := c.ResolveModel("gpt-5", routes)
	var ue *UnknownModelError
	if !errors.As(err, &ue) {
		t.Fatalf("unknown bare model: err = %v, want *UnknownModelError", err)
	}
	msg := err.Error()
	for _, want := range []string{`"gpt-5"`, "cheap, default, zzz", "openai/gpt-5", "default_provider"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if strings.ContainsAny(msg, "\n\r") {
		t.Errorf("not one line: %q", msg)
	}

	c.DefaultProvider = "anthropic"
	for name, want := range map[string]string{
		"gpt-5":            "anthropic/gpt-5", // no route serves it: default_provider
		"gpt-4.1":          "openai/gpt-4.1",  // a route's target comes first
		"meta/llama-3-70b": "anthropic/meta/llama-3-70b",
	} {
		if got, err := c.ResolveModel(name, routes); err != nil || got != want {
			t.Errorf("with default_provider: ResolveModel(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := c.ResolveModel("", routes); err == nil {
		t.Error("empty model name resolved")
	}
}
