package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/llmguard/llmguard/mcpproxy"
)

func TestMCPUpstreams(t *testing.T) {
	yaml := `providers: {anthropic: {api_key: k}}
mcp_upstreams:
  pay:
    command: python3
    args: [-m, pay_server]
    env: {PAY_TOKEN: "${PAY_TOKEN}"}
    tool_timeout: 20s
    tools:
      refund: {idempotent: true, timeout: 5s}
    breaker: {failures: 2, cooldown: 30s}
  docs:
    url: https://docs.example/mcp
    headers: {Authorization: "Bearer ${DOCS_TOKEN}"}
    prefix: always
`
	c, err := Parse("x.yaml", []byte(yaml), envFunc(map[string]string{"PAY_TOKEN": "pt", "DOCS_TOKEN": "dt"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	yes := true
	want := []mcpproxy.Upstream{
		{Name: "docs", URL: "https://docs.example/mcp", Headers: map[string]string{"Authorization": "Bearer dt"}, Prefix: "always"},
		{Name: "pay", Command: "python3", Args: []string{"-m", "pay_server"}, Env: map[string]string{"PAY_TOKEN": "pt"}, ToolTimeout: 20 * time.Second,
			Tools:   map[string]mcpproxy.ToolPolicy{"refund": {Timeout: 5 * time.Second, Idempotent: &yes}},
			Breaker: mcpproxy.Breaker{Failures: 2, Cooldown: 30 * time.Second}},
	}
	if d := cmp.Diff(want, c.Upstreams(), cmpopts.IgnoreFields(mcpproxy.Upstream{}, "HTTPClient", "Dial")); d != "" {
		t.Errorf("Upstreams (-want +got):\n%s", d)
	}

	for _, tc := range []struct{ yaml, want string }{
		{"mcp_upstreams: {x: {}}", "x.yaml:2:17: mcp_upstreams.x.command: set command (a stdio server) or url (a Streamable HTTP server)"},
		{"mcp_upstreams: {x: {command: a, url: 'https://h/mcp'}}", "mcp_upstreams.x.url: command is set too"},
		{"mcp_upstreams: {x: {url: 'ftp://h'}}", `mcp_upstreams.x.url: "ftp://h" is not an http(s) URL`},
		{"mcp_upstreams: {x: {command: a, prefix: never}}", `mcp_upstreams.x.prefix: "never": use auto or always`},
		{"mcp_upstreams: {'a b': {command: a}}", "mcp_upstreams.a b: a name is 1 to 64 letters"},
		{"mcp_upstreams: {x: {command: a, breaker: {failure_ratio: 2}}}", "mcp_upstreams.x.breaker.failure_ratio: 2 is not in [0,1]"},
	} {
		c, err := Parse("x.yaml", []byte("providers: {anthropic: {api_key: k}}\n"+tc.yaml+"\n"), envFunc(nil))
		if err == nil {
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line with %q", tc.yaml, err, tc.want)
		}
	}
}
