package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/telemetry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestMetrics: each LLM tool call counts as a request of dialect mcp, with
// its tokens.
func TestMetrics(t *testing.T) {
	r := newRig(t, []string{"anthropic/claude-sonnet-4-5"}, nil, nil)
	m := telemetry.New(&telemetry.Options{Routes: map[string][]string{"default": {"anthropic/claude-sonnet-4-5"}}})
	r.cfg.Metrics = m
	cs := r.connect(t, nil, nil)
	callOK(t, cs, "ask", map[string]any{"prompt": "What is llmguard?", "max_tokens": 50}, "")
	want := `
# HELP llmguard_requests_total API requests and tool calls by route, answering target, dialect and outcome (success, cached, static, error, canceled).
# TYPE llmguard_requests_total counter
llmguard_requests_total{dialect="mcp",outcome="success",route="default",target="anthropic/claude-sonnet-4-5"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "llmguard_requests_total"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(m.Registry(), "gen_ai_client_token_usage"); err != nil || n != 2 {
		t.Errorf("gen_ai_client_token_usage: %d series (%v), want 2 (input, output)", n, err)
	}
}

// TestTraceFromMeta: a tool call's span continues the traceparent in the
// request's _meta, with a child per upstream attempt.
func TestTraceFromMeta(t *testing.T) {
	r := newRig(t, []string{"anthropic/claude-sonnet-4-5"}, nil, nil)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	r.cfg.Tracer = telemetry.NewTracer(tp)
	cs := r.connect(t, nil, nil)
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"prompt": "hi"},
		Meta: mcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01"}})
	if err != nil || res.IsError {
		t.Fatalf("ask: %v %v", err, res)
	}
	spans := exp.GetSpans()
	var root, attempt bool
	for _, s := range spans {
		if s.SpanContext.TraceID().String() != traceID {
			t.Errorf("span %q in trace %s, want %s", s.Name, s.SpanContext.TraceID(), traceID)
		}
		switch s.Name {
		case "tools/call ask":
			root = s.Parent.SpanID().String() == parentID
		case "chat claude-sonnet-4-5":
			attempt = true
		}
	}
	if !root || !attempt {
		t.Errorf("spans %v: want the tool call's (child of the _meta traceparent) and its attempt's", spans)
	}
}
