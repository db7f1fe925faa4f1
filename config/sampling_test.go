package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/catalog"
)

func TestSamplingTargetAndMCPSettings(t *testing.T) {
	c, err := Load("testdata/mcp-sampling.yaml", envFunc(nil))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"anthropic/claude-haiku-4-5", catalog.SamplingTarget}, targets(c.Routes["default"])); d != "" {
		t.Errorf("targets (-want +got):\n%s", d)
	}
	if _, ok := c.Providers[catalog.SamplingProvider]; ok {
		t.Errorf("mcp/sampling must not become a provider entry: %v", c.Providers)
	}
	if c.MCP.ToolTimeout != 40*time.Second {
		t.Errorf("mcp.tool_timeout = %v, want 40s", c.MCP.ToolTimeout)
	}

	// The target is reserved: mcp/<anything else> is still an unknown provider,
	// and it may appear once per route.
	for _, bad := range []string{"[mcp/other]", "[mcp/sampling, mcp/sampling]"} {
		c, err := Parse("x.yaml", []byte("providers: {anthropic: {api_key: k}}\nroutes:\n  default:\n    targets: "+bad+"\n"), envFunc(nil))
		if err == nil {
			err = c.Validate()
		}
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("targets %s: err = %v, want one line", bad, err)
		}
	}
}
