package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/llmguard/llmguard/resilience"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of llmguard's own (the GenAI and HTTP ones come from semconv).
const (
	attrRoute     = attribute.Key("llmguard.route")
	attrTarget    = attribute.Key("llmguard.target")
	attrAttempt   = attribute.Key("llmguard.attempt")
	attrVerdict   = attribute.Key("llmguard.verdict")
	attrRetryable = attribute.Key("llmguard.retryable")
	attrScope     = attribute.Key("llmguard.scope")
	attrHint      = attribute.Key("llmguard.retry_after_seconds")
	attrWaited    = attribute.Key("llmguard.waited_seconds")
	attrRequestID = attribute.Key("llmguard.upstream.request_id")
	attrOutcome   = attribute.Key("llmguard.outcome")
	attrDialect   = attribute.Key("llmguard.dialect")
	attrDomain    = attribute.Key("llmguard.fault_domain")
)

// Tracer starts llmguard's spans: one per request (or MCP tool call), a
// child per upstream attempt carrying its verdict, the wait before it and
// the provider's request id. A nil *Tracer starts none and costs nothing.
// Safe for concurrent use.
type Tracer struct {
	tr   trace.Tracer
	prop propagation.TextMapPropagator
}

// NewTracer returns a Tracer on tp, propagating W3C trace context.
func NewTracer(tp trace.TracerProvider) *Tracer {
	return &Tracer{tr: tp.Tracer("github.com/llmguard/llmguard"),
		prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
}

// TracingFromEnv returns a Tracer exporting to OTLP over HTTP when
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is
// set, and nil (no tracing) when neither is. The exporter reads the other
// OTEL_EXPORTER_OTLP_* variables (headers, timeout, certificates) itself;
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the service (default
// llmguard). shutdown flushes the spans still queued.
func TracingFromEnv(ctx context.Context, getenv func(string) string, version string) (t *Tracer, shutdown func(context.Context) error, err error) {
	var opts []otlptracehttp.Option
	switch {
	case getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		opts = append(opts, otlptracehttp.WithEndpointURL(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")))
	case getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimSuffix(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/")+"/v1/traces"))
	default:
		return nil, func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	name := getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = "llmguard"
	}
	res, err := resource.Merge(resource.Default(),
		resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(name), semconv.ServiceVersion(version)))
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return NewTracer(tp), tp.Shutdown, nil
}

type spanKey struct{}

// Span is one request's span and its attempts' children. Its methods are
// safe for concurrent use (a hedge's branches report at once); a nil *Span
// does nothing.
type Span struct {
	t    *Tracer
	ctx  context.Context
	span trace.Span

	mu       sync.Mutex
	attempts map[string]trace.Span // open attempt spans by target
	current  context.Context       // the last attempt started (for propagation)
	waited   map[string]time.Duration
	errType  string
}

// Start begins the span of one request or tool call named name, as a child
// of the W3C trace context carrier holds (traceparent; nil or empty: a new
// trace). The returned context carries the span (see Transport).
func (t *Tracer) Start(ctx context.Context, name string, carrier propagation.TextMapCarrier, attrs ...attribute.KeyValue) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	if carrier != nil {
		ctx = t.prop.Extract(ctx, carrier)
	}
	ctx, sp := t.tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	s := &Span{t: t, span: sp}
	ctx = context.WithValue(ctx, spanKey{}, s)
	s.ctx = ctx
	return ctx, s
}

// StartHTTP begins the span of an HTTP request ("POST /v1/messages"),
// continuing the caller's traceparent, and returns the request with the
// span in its context.
func (t *Tracer) StartHTTP(r *http.Request) (*http.Request, *Span) {
	if t == nil {
		return r, nil
	}
	ctx, s := t.Start(r.Context(), r.Method+" "+r.URL.Path, propagation.HeaderCarrier(r.Header),
		semconv.HTTPRequestMethodKey.String(r.Method), semconv.URLPath(r.URL.Path))
	return r.WithContext(ctx), s
}

// Event records one engine event of the span's call: pass it as
// resilience.Call.OnEvent (or chain it).
func (s *Span) Event(ev resilience.Event) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch ev.Kind {
	case resilience.EventAttempt:
		s.attempt(ev)
	case resilience.EventFailure:
		s.failure(ev)
	case resilience.EventPace:
		s.wait(ev.Target, ev.Wait)
		s.span.AddEvent("pacing", trace.WithAttributes(attrTarget.String(ev.Target),
			attribute.Float64("llmguard.wait_seconds", ev.Wait.Seconds())))
	case resilience.EventHedgeWon:
		s.span.AddEvent("hedge_won", trace.WithAttributes(attribute.String("llmguard.from", ev.From), attrTarget.String(ev.Target)))
	case resilience.EventSuccess:
		if sp := s.attempts[ev.Target]; sp != nil {
			sp.End()
			delete(s.attempts, ev.Target)
		}
		if ev.Reason != "" {
			s.span.AddEvent(ev.Reason, trace.WithAttributes(attrTarget.String(ev.Target)))
		}
	case resilience.EventRetry:
		s.wait(ev.Target, ev.Wait)
		s.span.AddEvent("retry", trace.WithAttributes(attrTarget.String(ev.Target), attrAttempt.Int(ev.Attempt),
			attribute.Float64("llmguard.wait_seconds", ev.Wait.Seconds())))
	case resilience.EventFallback:
		attrs := []attribute.KeyValue{attribute.String("llmguard.from", ev.From), attrTarget.String(ev.Target)}
		if ev.Verdict != nil {
			attrs = append(attrs, semconv.ErrorTypeKey.String(string(ev.Verdict.Class)))
		}
		if ev.Reason != "" {
			attrs = append(attrs, attribute.String("llmguard.reason", ev.Reason))
		}
		s.span.AddEvent("fallback", trace.WithAttributes(attrs...))
	case resilience.EventSkip:
		s.span.AddEvent("skip", trace.WithAttributes(attrTarget.String(ev.Target), attribute.String("llmguard.reason", ev.Reason)))
	case resilience.EventBreaker:
		s.span.AddEvent("breaker", trace.WithAttributes(attrTarget.String(ev.Target),
			attribute.String("llmguard.from", ev.From), attribute.String("llmguard.to", ev.To)))
	case resilience.EventGiveUp:
		if s.errType == "" {
			s.errType = giveUpReason(ev.Err)
		}
	}
}

// attempt starts an attempt's child span (its wait before it as an
// attribute). s.mu is held.
func (s *Span) attempt(ev resilience.Event) {
	prov, model, _ := strings.Cut(ev.Target, "/")
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(prov),
		semconv.GenAIRequestModel(model), attrTarget.String(ev.Target), attrAttempt.Int(ev.Attempt)}
	if w := s.waited[ev.Target]; w > 0 {
		attrs = append(attrs, attrWaited.Float64(w.Seconds()))
		delete(s.waited, ev.Target)
	}
	ctx, sp := s.t.tr.Start(s.ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if s.attempts == nil {
		s.attempts = map[string]trace.Span{}
	}
	if old := s.attempts[ev.Target]; old != nil {
		old.End()
	}
	s.attempts[ev.Target] = sp
	s.current = ctx
}

// failure ends an attempt's span with its verdict (a note on it, Reason
// set, leaves it open). s.mu is held.
func (s *Span) failure(ev resilience.Event) {
	sp := s.attempts[ev.Target]
	if sp == nil {
		return
	}
	if v := ev.Verdict; v != nil {
		s.errType = string(v.Class)
		sp.SetAttributes(semconv.ErrorTypeKey.String(string(v.Class)), attrVerdict.String(v.Message),
			attrRetryable.Bool(v.Retryable), attrScope.String(string(v.Scope)), attrDomain.String(Domain(v.Class)))
		if v.Status > 0 {
			sp.SetAttributes(semconv.HTTPResponseStatusCode(v.Status))
		}
		if v.Wait > 0 {
			sp.SetAttributes(attrHint.Float64(v.Wait.Seconds()))
		}
		if v.RequestID != "" {
			sp.SetAttributes(attrRequestID.String(v.RequestID))
		}
		sp.SetStatus(codes.Error, v.Message)
	}
	if ev.Reason != "" {
		sp.AddEvent(ev.Reason)
		return // a note on the attempt: it goes on
	}
	sp.End()
	delete(s.attempts, ev.Target)
}

// wait adds d to the wait before target's next attempt. s.mu is held.
func (s *Span) wait(target string, d time.Duration) {
	if s.waited == nil {
		s.waited = map[string]time.Duration{}
	}
	s.waited[target] += d
}

// End ends the span with what the request record says; an error or
// canceled outcome marks it failed with error.type (the last failure's
// class). Attempt spans still open (a hedge's loser) end with it.
func (s *Span) End(r *Request, status int) {
	if s == nil {
		return
	}
	s.mu.Lock()
	for t, sp := range s.attempts {
		sp.End()
		delete(s.attempts, t)
	}
	errType := s.errType
	s.mu.Unlock()
	sp := s.span
	if r != nil {
		attrs := []attribute.KeyValue{attrRoute.String(r.Route), attrOutcome.String(r.Outcome), attrDialect.String(r.Dialect)}
		if r.Target != "" {
			prov, model, _ := strings.Cut(r.Target, "/")
			attrs = append(attrs, attrTarget.String(r.Target), semconv.GenAIProviderNameKey.String(prov), semconv.GenAIRequestModel(model))
		}
		if r.Model != "" {
			attrs = append(attrs, semconv.GenAIResponseModel(r.Model))
		}
		if u := r.Usage; u.InputTokens > 0 || u.OutputTokens > 0 {
			attrs = append(attrs, semconv.GenAIUsageInputTokens(u.InputTokens), semconv.GenAIUsageOutputTokens(u.OutputTokens))
		}
		sp.SetAttributes(attrs...)
		if r.Outcome == OutcomeError || r.Outcome == OutcomeCanceled {
			if errType == "" {
				errType = r.Outcome
			}
			sp.SetAttributes(semconv.ErrorTypeKey.String(errType))
			sp.SetStatus(codes.Error, errType)
		}
	}
	if status > 0 {
		sp.SetAttributes(semconv.HTTPResponseStatusCode(status))
	}
	sp.End()
}

// Transport returns rt (nil: http.DefaultTransport) injecting the W3C trace
// context of the request's current attempt (else of the request's span)
// into every upstream request, so the provider's logs join the trace.
// With a nil Tracer it returns rt unchanged.
func (t *Tracer) Transport(rt http.RoundTripper) http.RoundTripper {
	if t == nil {
		return rt
	}
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &propagating{next: rt, prop: t.prop}
}

type propagating struct {
	next http.RoundTripper
	prop propagation.TextMapPropagator
}

func (p *propagating) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	s, _ := ctx.Value(spanKey{}).(*Span)
	if s == nil {
		return p.next.RoundTrip(req)
	}
	s.mu.Lock()
	if s.current != nil {
		ctx = s.current
	}
	s.mu.Unlock()
	r := req.Clone(req.Context()) // a RoundTripper must not change the request
	p.prop.Inject(ctx, propagation.HeaderCarrier(r.Header))
	return p.next.RoundTrip(r)
}

// MetaCarrier reads W3C trace context from an MCP request's _meta
// (traceparent, tracestate as string members).
type MetaCarrier map[string]any

// Get returns a string member of the _meta.
func (m MetaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

// Set is not used (the carrier is only read).
func (m MetaCarrier) Set(key, value string) { m[key] = value }

// Keys lists the members.
func (m MetaCarrier) Keys() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
