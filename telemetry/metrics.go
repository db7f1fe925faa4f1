package telemetry

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options configures New. A nil *Options means defaults.
type Options struct {
	// Routes are the engine's routes (Engine.Routes): the only route and
	// target names that become label values; any other name a call
	// carries is counted as "other". nil = none.
	Routes map[string][]string
	// Catalog prices the tokens of an answer (nil = the built-in table).
	Catalog *catalog.Catalog
	// Status snapshots the targets (Engine.Status), read at each scrape for
	// the breaker-state, in-flight and queued gauges (nil = no such gauges).
	Status func() []resilience.TargetStatus
	// Runtime adds the Go runtime and process collectors (go_*, process_*).
	Runtime bool
}

// Metrics counts what the engine and the edges do, in a private Prometheus
// registry served by Handler. Create it with New; its methods are safe for
// concurrent use and never block. The zero value is not usable; a nil
// *Metrics ignores every observation.
type Metrics struct {
	reg   *prometheus.Registry
	names names
	cat   *catalog.Catalog

	requests     *prometheus.CounterVec
	reqDuration  *prometheus.HistogramVec
	attempts     *prometheus.CounterVec
	opDuration   *prometheus.HistogramVec
	retries      *prometheus.CounterVec
	retryWait    *prometheus.CounterVec
	fallbacks    *prometheus.CounterVec
	malformed    *prometheus.CounterVec
	hedges       *prometheus.CounterVec
	pacing       *prometheus.HistogramVec
	skips        *prometheus.CounterVec
	breakerTrans *prometheus.CounterVec
	keyBreaker   *prometheus.GaugeVec
	giveUps      *prometheus.CounterVec
	budgetOut    *prometheus.CounterVec
	stateFail    *prometheus.CounterVec
	firstChunk   *prometheus.HistogramVec
	perChunk     *prometheus.HistogramVec
	tokens       *prometheus.HistogramVec
	cost         *prometheus.CounterVec
	wasted       *prometheus.CounterVec
	// cached holds the children every request counts in (see handles).
	cached struct {
		requests, attempts, cost, wasted                      *handles[prometheus.Counter]
		reqDuration, opDuration, firstChunk, perChunk, tokens *handles[prometheus.Observer]
		prices                                                *handles[priced] // by target
	}
}

// Label names of the OpenTelemetry GenAI conventions, as Prometheus spells them.
const (
	lOperation     = "gen_ai_operation_name"
	lProvider      = "gen_ai_provider_name"
	lRequestModel  = "gen_ai_request_model"
	lResponseModel = "gen_ai_response_model"
	lTokenType     = "gen_ai_token_type"
	lErrorType     = "error_type"
)

// Latency buckets in seconds: the GenAI conventions' advice for operation
// durations, which also covers a first chunk and the gap between chunks.
var durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

// tokenBuckets are the GenAI conventions' advice for token counts.
var tokenBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}

// New returns Metrics with every family registered.
func New(o *Options) *Metrics {
	opts := defaults.Copy(o)
	m := &Metrics{reg: prometheus.NewRegistry(), names: newNames(opts.Routes), cat: opts.Catalog}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		m.reg.MustRegister(v)
		return v
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
		m.reg.MustRegister(v)
		return v
	}
	m.requests = counter("llmguard_requests_total",
		"API requests and tool calls by route, answering target, dialect and outcome (success, cached, static, error, canceled).",
		"route", "target", "dialect", "outcome")
	m.reqDuration = histogram("llmguard_request_duration_seconds",
		"End-to-end time of a request, retries, waits and fallbacks included (a stream: until its last chunk).",
		durationBuckets, "route", "dialect", "outcome")
	m.attempts = counter("llmguard_attempts_total",
		"Upstream attempts by target and, for a failed one, the classifier's error class and its fault domain (caller, policy, provider, network, gateway); both empty on success.",
		"target", lErrorType, "fault_domain")
	m.opDuration = histogram("gen_ai_client_operation_duration_seconds",
		"Time of one upstream attempt (a stream: until its first chunk).",
		durationBuckets, lOperation, lProvider, lRequestModel, lErrorType)
	m.retries = counter("llmguard_retries_total", "Retries scheduled, by target and the error class retried.", "target", lErrorType)
	m.retryWait = counter("llmguard_retry_wait_seconds_total",
		"Time spent waiting before retries, by target and source: hint (the server's retry-after) or backoff.",
		"target", "source")
	m.fallbacks = counter("llmguard_fallbacks_total",
		"Moves from one target to the next, by reason: the error class that caused it, or hedge.",
		"from", "to", "reason")
	m.malformed = counter("llmguard_stream_malformed_events_total",
		"Stream events skipped because they could not be decoded (invalid JSON in a data line), by target.", "target")
	m.hedges = counter("llmguard_hedges_total", "Hedged attempts by the hedge's target: started, and won (answered before the attempt it hedged, which was cancelled).", "target", "result")
	m.pacing = histogram("llmguard_pacing_delay_seconds",
		"Time an attempt waited for its turn under the rate limit its target's answers announced (x-ratelimit-remaining-*), before it was sent, by target; one observation per attempt that waited.",
		durationBuckets, "target")
	m.skips = counter("llmguard_skips_total",
		"Targets a call did not try, by reason (breaker_open, cooldown, pacing, retry_budget, concurrency, wait_too_long, deadline, max_attempts, state_store, ineligible).",
		"target", "reason")
	m.breakerTrans = counter("llmguard_breaker_transitions_total",
		"Circuit-breaker state changes by target, scope (target, or key: the provider key's breaker) and states.",
		"target", "scope", "from", "to")
	m.keyBreaker = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "llmguard_key_breaker_state",
		Help: "State of a provider key's breaker as its last change left it: 0 closed, 1 half_open, 2 open."}, []string{"provider"})
	m.reg.MustRegister(m.keyBreaker)
	m.giveUps = counter("llmguard_give_ups_total",
		"Calls that failed, by route and how they ended (exhausted, deadline, rejected, no_target, repeat, unknown_route, max_cost, concurrency, other).",
		"route", "reason")
	m.budgetOut = counter("llmguard_retry_budget_exhausted_total", "Retries refused because the target's retry budget was spent.", "target")
	m.stateFail = counter("llmguard_state_store_fallbacks_total",
		"Admissions decided without the shared state store because it failed (the target was skipped).", "target")
	m.firstChunk = histogram("gen_ai_client_operation_time_to_first_chunk_seconds",
		"Time from a streaming request's arrival to its first chunk sent to the client.",
		durationBuckets, lOperation, lProvider, lRequestModel)
	m.perChunk = histogram("gen_ai_client_operation_time_per_output_chunk_seconds",
		"Mean time between a stream's output chunks after the first, one observation per stream.",
		durationBuckets, lOperation, lProvider, lRequestModel)
	m.tokens = histogram("gen_ai_client_token_usage",
		"Tokens per answer by type: input (all prompt tokens), output, cache_read and cache_write (the prompt tokens served from or written to the provider's cache).",
		tokenBuckets, lOperation, lProvider, lRequestModel, lResponseModel, lTokenType)
	m.cost = counter("llmguard_cost_usd_total", "Cost in US dollars of the answers, from the pricing table, by target.", "target")
	m.wasted = counter("llmguard_wasted_cost_usd_total",
		"Cost in US dollars of tokens paid for that never reached the caller (failed attempts the provider billed, a caller gone, a stream broken after it began), by the target that answered (\"\" when none did).",
		"target")
	c := &m.cached
	c.requests, c.attempts = newHandles(4, m.requests.WithLabelValues), newHandles(3, m.attempts.WithLabelValues)
	c.cost, c.wasted = newHandles(1, m.cost.WithLabelValues), newHandles(1, m.wasted.WithLabelValues)
	c.reqDuration, c.opDuration = newHandles(3, m.reqDuration.WithLabelValues), newHandles(4, m.opDuration.WithLabelValues)
	c.firstChunk, c.perChunk = newHandles(3, m.firstChunk.WithLabelValues), newHandles(3, m.perChunk.WithLabelValues)
	c.tokens = newHandles(5, m.tokens.WithLabelValues)
	c.prices = newHandles(1, func(v ...string) priced { return m.price(v[0]) })
	m.zero()
	if opts.Status != nil {
		m.reg.MustRegister(&statusCollector{status: opts.Status, names: m.names})
	}
	if opts.Runtime {
		m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return m
}

// zero starts the counters of rare events at 0 for every configured route
// and target, so that /metrics lists their families (and rate() has a
// series) before the first one happens.
func (m *Metrics) zero() {
	for r := range m.names.routes {
		for _, reason := range giveUpReasons {
			m.giveUps.WithLabelValues(r, reason)
		}
	}
	for t := range m.names.targets {
		if t == "static" {
			continue
		}
		m.hedges.WithLabelValues(t, "started")
		m.hedges.WithLabelValues(t, "won")
		m.budgetOut.WithLabelValues(t)
		m.stateFail.WithLabelValues(t)
		m.malformed.WithLabelValues(t)
	}
}

// Registry returns the private registry, to add collectors or to gather.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text (or OpenMetrics) format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Event counts one engine event; pass it as resilience.Options.OnEvent
// (directly or chained).
func (m *Metrics) Event(ev resilience.Event) {
	if m == nil {
		return
	}
	switch ev.Kind {
	case resilience.EventSuccess:
		if ev.Attempt > 0 { // not a cached or static answer
			t := m.names.target(ev.Target)
			m.cached.attempts.get(labelKey{t, "", ""}).Inc()
			prov, model := m.names.genAI(ev.Target)
			m.cached.opDuration.get(labelKey{"chat", prov, model, ""}).Observe(ev.Elapsed.Seconds())
		}
	case resilience.EventFailure:
		m.failure(ev)
	case resilience.EventRetry:
		m.retry(ev)
	case resilience.EventFallback:
		m.fallback(ev)
	case resilience.EventHedgeWon:
		m.hedges.WithLabelValues(m.names.target(ev.Target), "won").Inc()
	case resilience.EventPace:
		m.pacing.WithLabelValues(m.names.target(ev.Target)).Observe(ev.Wait.Seconds())
	case resilience.EventSkip:
		m.skip(ev)
	case resilience.EventBreaker:
		m.breaker(ev)
	case resilience.EventMalformed:
		m.malformed.WithLabelValues(m.names.target(ev.Target)).Add(float64(ev.Malformed))
	case resilience.EventGiveUp:
		m.giveUps.WithLabelValues(m.names.route(ev.Route), giveUpReason(ev.Err)).Inc()
	}
}

// failure counts a failed attempt (or a note on one: Reason set).
func (m *Metrics) failure(ev resilience.Event) {
	t := m.names.target(ev.Target)
	class, domain := "", DomainGateway
	if ev.Verdict != nil {
		class, domain = string(ev.Verdict.Class), Domain(ev.Verdict.Class)
	}
	m.cached.attempts.get(labelKey{t, class, domain}).Inc()
	if ev.Reason == "" { // the attempt's own end, not a note on it
		prov, model := m.names.genAI(ev.Target)
		m.cached.opDuration.get(labelKey{"chat", prov, model, class}).Observe(ev.Elapsed.Seconds())
	}
}

// retry counts a scheduled retry and the wait before it.
func (m *Metrics) retry(ev resilience.Event) {
	t := m.names.target(ev.Target)
	class, source := "", "backoff"
	if ev.Verdict != nil {
		class = string(ev.Verdict.Class)
		if ev.Verdict.Wait > 0 {
			source = "hint"
		}
	}
	m.retries.WithLabelValues(t, class).Inc()
	if ev.Wait > 0 {
		m.retryWait.WithLabelValues(t, source).Add(ev.Wait.Seconds())
	}
}

// fallback counts a move to the next target (a hedge's start too).
func (m *Metrics) fallback(ev resilience.Event) {
	to := m.names.target(ev.Target)
	reason := "unknown"
	switch {
	case strings.HasPrefix(ev.Reason, "hedge"):
		reason = "hedge"
		m.hedges.WithLabelValues(to, "started").Inc()
	case ev.Verdict != nil:
		reason = string(ev.Verdict.Class)
	}
	m.fallbacks.WithLabelValues(m.names.target(ev.From), to, reason).Inc()
}

// skip counts a target passed over, by its bucketed reason.
func (m *Metrics) skip(ev resilience.Event) {
	t := m.names.target(ev.Target)
	r := skipReason(ev.Reason)
	m.skips.WithLabelValues(t, r).Inc()
	switch r {
	case "retry_budget":
		m.budgetOut.WithLabelValues(t).Inc()
	case "state_store":
		m.stateFail.WithLabelValues(t).Inc()
	}
}

// breaker counts a breaker's change of state.
func (m *Metrics) breaker(ev resilience.Event) {
	t, scope := m.names.target(ev.Target), "target"
	if p, ok := strings.CutPrefix(ev.Reason, "key "); ok {
		scope = "key"
		if m.names.providers[p] {
			m.keyBreaker.WithLabelValues(p).Set(stateValue(ev.To))
		}
	}
	m.breakerTrans.WithLabelValues(t, scope, ev.From, ev.To).Inc()
}

// Request is one API request (or MCP tool call) as it ended.
type Request struct {
	// Dialect is the API the caller spoke: openai, anthropic, responses, mcp.
	Dialect string
	// Operation is the GenAI operation: chat (default), embeddings.
	Operation string
	// Route is the engine route the request resolved to; Target the one
	// that answered ("" when none did).
	Route, Target string
	// Outcome is one of the Outcome constants.
	Outcome string
	// Duration is the whole request, a stream until its end.
	Duration time.Duration
	// Chunks counts a stream's output chunks sent (0: not a stream, or
	// none went out), FirstChunk is the time to the first.
	FirstChunk time.Duration
	Chunks     int
	// Usage is the answer's token usage (zero when unknown); Model the
	// model the answer named.
	Usage provider.Usage
	Model string
	// Broken reports a stream that failed after it began (its tokens count
	// as wasted cost).
	Broken bool
	// WastedUSD is what the engine says the call's failed attempts cost
	// (resilience.Result.Wasted, RouteError.Wasted), counted as wasted
	// under target "" when no target answered.
	WastedUSD float64
}

// Request counts one request that ended.
func (m *Metrics) Request(r *Request) {
	if m == nil || r == nil {
		return
	}
	route, target := m.names.route(r.Route), m.names.target(r.Target)
	outcome := r.Outcome
	if outcome == "" {
		outcome = OutcomeSuccess
	}
	m.cached.requests.get(labelKey{route, target, r.Dialect, outcome}).Inc()
	if r.WastedUSD > 0 {
		m.cached.wasted.get(labelKey{target}).Add(r.WastedUSD)
	}
	m.cached.reqDuration.get(labelKey{route, r.Dialect, outcome}).Observe(r.Duration.Seconds())
	if r.Target == "" || outcome == OutcomeCached || outcome == OutcomeStatic {
		return
	}
	op := r.Operation
	if op == "" {
		op = "chat"
	}
	prov, model := m.names.genAI(r.Target)
	if r.Chunks > 0 {
		m.cached.firstChunk.get(labelKey{op, prov, model}).Observe(r.FirstChunk.Seconds())
		if r.Chunks > 1 {
			per := (r.Duration - r.FirstChunk) / time.Duration(r.Chunks-1)
			m.cached.perChunk.get(labelKey{op, prov, model}).Observe(per.Seconds())
		}
	}
	u := r.Usage
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		return
	}
	rm := m.names.model(r.Model)
	m.cached.tokens.get(labelKey{op, prov, model, rm, "input"}).Observe(float64(u.InputTokens))
	m.cached.tokens.get(labelKey{op, prov, model, rm, "output"}).Observe(float64(u.OutputTokens))
	if u.CacheReadTokens > 0 {
		m.cached.tokens.get(labelKey{op, prov, model, rm, "cache_read"}).Observe(float64(u.CacheReadTokens))
	}
	if u.CacheWriteTokens > 0 {
		m.cached.tokens.get(labelKey{op, prov, model, rm, "cache_write"}).Observe(float64(u.CacheWriteTokens))
	}
	var pr priced
	if target == r.Target { // a configured target: its price is cached
		pr = m.cached.prices.get(labelKey{target})
	} else {
		pr = m.price(r.Target)
	}
	if !pr.ok {
		return
	}
	c := pr.Cost(u.InputTokens, u.OutputTokens)
	m.cached.cost.get(labelKey{target}).Add(c)
	if r.Broken || outcome == OutcomeCanceled {
		m.cached.wasted.get(labelKey{target}).Add(c)
	}
}

// priced is a target's price, and whether the catalogue knows it.
type priced struct {
	catalog.Price
	ok bool
}

// price is the catalogue's price of target ("provider/model").
func (m *Metrics) price(target string) priced {
	p, model, ok := strings.Cut(target, "/")
	if !ok {
		return priced{}
	}
	price, ok := m.cat.Price(p, model)
	return priced{Price: price, ok: ok}
}

// ChatRequest is the record of one engine Chat call made for a caller
// (an MCP tool call, a demo request) that started at start and returned
// res or err; ctx is the caller's, whose end makes a failure canceled.
func ChatRequest(ctx context.Context, dialect, route string, start time.Time, res *resilience.Result, err error) *Request {
	r := &Request{Dialect: dialect, Route: route, Duration: time.Since(start), Outcome: OutcomeSuccess}
	switch {
	case err != nil && ctx.Err() != nil:
		r.Outcome = OutcomeCanceled
	case err != nil:
		r.Outcome = OutcomeError
	case res.Cached:
		r.Outcome = OutcomeCached
	case res.Static:
		r.Outcome = OutcomeStatic
	}
	if re, ok := errors.AsType[*resilience.RouteError](err); ok {
		r.WastedUSD = re.Wasted
	}
	if err == nil {
		r.Target, r.WastedUSD = res.Target, res.Wasted
		if res.Response != nil {
			r.Usage, r.Model = res.Response.Usage, res.Response.Model
		}
	}
	return r
}
