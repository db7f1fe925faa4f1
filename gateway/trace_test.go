package gateway

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/telemetry"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpSink is an in-process OTLP/HTTP trace receiver: it decodes each
// export request's protobuf body and keeps the spans.
type otlpSink struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (s *otlpSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil && r.URL.Path == "/v1/traces" {
		err = proto.Unmarshal(b, &req)
	}
	if err != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			s.spans = append(s.spans, ss.Spans...)
		}
	}
	s.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func attr(sp *tracepb.Span, key string) (string, bool) {
	for _, a := range sp.Attributes {
		if a.Key == key {
			if v, ok := a.Value.Value.(*commonpb.AnyValue_StringValue); ok {
				return v.StringValue, true
			}
			return a.Value.String(), true
		}
	}
	return "", false
}

// TestTraceRetriedThenFallenBack: a call that failed twice on its first
// target (529, retried) and fell back to the second is exported over OTLP
// as one request span continuing the caller's traceparent, with a child per
// attempt carrying its verdict, the wait before it and the provider's
// request id, and each upstream request carried that attempt's trace
// context.
func TestTraceRetriedThenFallenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &otlpSink{}
		rs := pipenet.NewServer(sink)
		defer rs.Close()
		exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(rs.URL+"/v1/traces"),
			otlptracehttp.WithHTTPClient(rs.Client()))
		if err != nil {
			t.Fatal(err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		defer tp.Shutdown(context.Background())
		tracer := telemetry.NewTracer(tp)

		var mu sync.Mutex
		var upstream []string // traceparent of each upstream request
		m := mock.New(nil)
		ms := pipenet.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			upstream = append(upstream, r.Header.Get("Traceparent"))
			mu.Unlock()
			m.ServeHTTP(w, r)
		}))
		defer ms.Close()
		client := *ms.Client()
		client.Transport = tracer.Transport(client.Transport)
		srv, _ := newGateway(t, strings.ReplaceAll(metricsConfig, "MOCK", ms.URL), &client, nil, &Options{Tracer: tracer})
		gw := pipenet.NewServer(srv.Handler())
		defer gw.Close()

		const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
		if code := doPost(t, gw, "/v1/chat/completions", oaBody("overloaded", false, ""),
			"traceparent", "00-"+traceID+"-"+parentID+"-01"); code != 200 {
			t.Fatalf("status %d", code)
		}
		sink.mu.Lock()
		spans := sink.spans
		sink.mu.Unlock()

		var root *tracepb.Span
		for _, sp := range spans {
			if sp.Name == "POST /v1/chat/completions" {
				root = sp
			}
		}
		if root == nil {
			t.Fatalf("no request span among %d", len(spans))
		}
		if hex.EncodeToString(root.TraceId) != traceID || hex.EncodeToString(root.ParentSpanId) != parentID {
			t.Errorf("request span trace %x parent %x: the caller's traceparent was not continued", root.TraceId, root.ParentSpanId)
		}
		if v, _ := attr(root, "llmguard.target"); v != "openai/gpt-4o" {
			t.Errorf("request span target %q", v)
		}
		var fellBack bool
		for _, e := range root.Events {
			fellBack = fellBack || e.Name == "fallback"
		}
		if !fellBack {
			t.Error("request span has no fallback event")
		}

		type want struct{ target, errType string }
		var got []want
		ids := map[string]bool{}
		for _, sp := range spans {
			if sp == root {
				continue
			}
			if string(sp.ParentSpanId) != string(root.SpanId) {
				t.Errorf("span %q is not a child of the request span", sp.Name)
				continue
			}
			ids[hex.EncodeToString(sp.SpanId)] = true
			target, _ := attr(sp, "llmguard.target")
			errType, _ := attr(sp, "error.type")
			got = append(got, want{target, errType})
			if errType != "" {
				if id, _ := attr(sp, "llmguard.upstream.request_id"); id == "" {
					t.Errorf("failed attempt %q has no upstream request id", sp.Name)
				}
				if v, _ := attr(sp, "llmguard.verdict"); !strings.Contains(v, "529") {
					t.Errorf("failed attempt verdict %q", v)
				}
			}
			if n, _ := attr(sp, "llmguard.attempt"); target != "openai/gpt-4o" && strings.Contains(n, "2") {
				if _, ok := attr(sp, "llmguard.waited_seconds"); !ok {
					t.Error("the retry's attempt span does not say how long it waited")
				}
			}
		}
		const ant = "anthropic/claude-sonnet-4-5+fault=529:9"
		wantAttempts := []want{{ant, "overloaded"}, {ant, "overloaded"}, {"openai/gpt-4o", ""}}
		if len(got) != len(wantAttempts) {
			t.Fatalf("attempt spans %v, want %v", got, wantAttempts)
		}
		for i := range got {
			if got[i] != wantAttempts[i] {
				t.Errorf("attempt span %d: %v, want %v", i, got[i], wantAttempts[i])
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(upstream) != 3 {
			t.Fatalf("%d upstream requests, want 3", len(upstream))
		}
		for i, tp := range upstream {
			parts := strings.Split(tp, "-")
			if len(parts) != 4 || parts[1] != traceID || !ids[parts[2]] {
				t.Errorf("upstream request %d: traceparent %q is not one of the attempts' (trace %s)", i, tp, traceID)
			}
		}
	})
}

// TestTracingFromEnv: tracing is off unless an OTLP endpoint is set.
func TestTracingFromEnv(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	tr, shutdown, err := telemetry.TracingFromEnv(context.Background(), getenv, "test")
	if err != nil || tr != nil {
		t.Fatalf("no endpoint: tracer %v, err %v; want none", tr, err)
	}
	shutdown(context.Background())
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:4318"
	tr, shutdown, err = telemetry.TracingFromEnv(context.Background(), getenv, "test")
	if err != nil || tr == nil {
		t.Fatalf("with an endpoint: tracer %v, err %v", tr, err)
	}
	shutdown(context.Background())
}
