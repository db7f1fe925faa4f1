package config

import (
	"errors"
	"time"

	"github.com/llmguard/llmguard/mcpproxy"
)

// MCPUpstream is one MCP server whose tools `llmguard mcp` re-exposes
// (mcp_upstreams.NAME): a stdio server it starts (command, args) or a
// Streamable HTTP server (url). Every zero field means mcpproxy's default.
type MCPUpstream struct {
	// Command starts a stdio server (with Args); exactly one of command and url.
	Command string `yaml:"command"`
	// Args are the command's arguments.
	Args []string `yaml:"args"`
	// Env is added to llmguard's environment for the command.
	Env map[string]string `yaml:"env"`
	// Dir is the command's working directory ("" = llmguard's).
	Dir string `yaml:"dir"`
	// URL is a Streamable HTTP server's endpoint.
	URL string `yaml:"url"`
	// Headers are sent with each HTTP request (e.g. Authorization: "Bearer ${TOKEN}").
	Headers map[string]string `yaml:"headers"`
	// Prefix is "auto" (default: a tool keeps its name unless another has
	// it) or "always" (every tool is NAME__tool).
	Prefix string `yaml:"prefix"`
	// ToolTimeout is each call's deadline (default mcp.tool_timeout, else 50s).
	ToolTimeout time.Duration `yaml:"tool_timeout"`
	// AttemptTimeout cuts an attempt of a retry-safe tool (0 = the whole deadline).
	AttemptTimeout time.Duration `yaml:"attempt_timeout"`
	// MaxAttempts bounds a retry-safe tool's attempts (default 3).
	MaxAttempts int `yaml:"max_attempts"`
	// HedgeAfter sends a retry-safe tool a second time after this long without an answer (0 = never).
	HedgeAfter time.Duration `yaml:"hedge_after"`
	// RunFor is how long a call may go on upstream after its caller's deadline (default 5m).
	RunFor time.Duration `yaml:"run_for"`
	// CacheTTL is how long a result answers an identical call (default 10m; negative: only while it runs).
	CacheTTL time.Duration `yaml:"cache_ttl"`
	// Tools overrides single tools, by the server's tool name.
	Tools map[string]MCPTool `yaml:"tools"`
	// Breaker is the server's breaker.
	Breaker MCPBreaker `yaml:"breaker"`
}

// MCPTool overrides one upstream tool.
type MCPTool struct {
	// Timeout is the tool's deadline (default the server's tool_timeout).
	Timeout time.Duration `yaml:"timeout"`
	// Idempotent overrides the tool's annotations: true = retry-safe, false
	// = never retried (unset: retry-safe when it declares readOnlyHint or
	// idempotentHint).
	Idempotent *bool `yaml:"idempotent"`
}

// MCPBreaker is an upstream server's breaker (defaults: 3 failures, ratio
// 0.5, window 60s, cooldowns 2s doubling to 60s).
type MCPBreaker struct {
	Failures        int           `yaml:"failures"`
	FailureRatio    float64       `yaml:"failure_ratio"`
	Window          time.Duration `yaml:"window"`
	InitialCooldown time.Duration `yaml:"initial_cooldown"`
	Cooldown        time.Duration `yaml:"cooldown"`
}

// Upstreams returns mcp_upstreams as mcpproxy's upstreams, sorted by name.
func (c *Config) Upstreams() []mcpproxy.Upstream {
	out := make([]mcpproxy.Upstream, 0, len(c.MCPUpstreams))
	for _, name := range sortedKeys(c.MCPUpstreams) {
		out = append(out, c.MCPUpstreams[name].upstream(name))
	}
	return out
}

func (m *MCPUpstream) upstream(name string) mcpproxy.Upstream {
	if m == nil {
		m = &MCPUpstream{}
	}
	u := mcpproxy.Upstream{
		Name: name, Command: m.Command, Args: m.Args, Env: m.Env, Dir: m.Dir, URL: m.URL, Headers: m.Headers,
		Prefix: m.Prefix, ToolTimeout: m.ToolTimeout, AttemptTimeout: m.AttemptTimeout, MaxAttempts: m.MaxAttempts,
		HedgeAfter: m.HedgeAfter, RunFor: m.RunFor, CacheTTL: m.CacheTTL,
		Breaker: mcpproxy.Breaker(m.Breaker),
	}
	if len(m.Tools) > 0 {
		u.Tools = make(map[string]mcpproxy.ToolPolicy, len(m.Tools))
		for k, t := range m.Tools {
			u.Tools[k] = mcpproxy.ToolPolicy(t)
		}
	}
	return u
}

// mcpUpstreams checks mcp_upstreams with mcpproxy's own rules.
func (v *validator) mcpUpstreams() {
	for _, name := range sortedKeys(v.c.MCPUpstreams) {
		u := v.c.MCPUpstreams[name].upstream(name)
		for _, e := range unjoin(u.Validate()) {
			path := "mcp_upstreams." + name
			if fe, ok := errors.AsType[*mcpproxy.FieldError](e); ok {
				if fe.Field != "" {
					path += "." + fe.Field
				}
				v.add(path, "%s", fe.Msg)
				continue
			}
			v.add(path, "%v", e)
		}
	}
}
