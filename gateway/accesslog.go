package gateway

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/telemetry"
)

// This file is the access log: one line per API request at info level,
//
//	msg=access method=POST path=/v1/messages model=claude-sonnet-4-5 route=default target=anthropic/claude-sonnet-4-5 status=200 attempts=1 fallbacks=0 ms=812.4 request_id=req_011… stream=true
//
// written once where the request ends (Server.api, after the handler
// returned, so a stream is logged when it ended). It never holds a key or
// any request or answer content.

// access is one request's record, filled in as the request runs. The zero
// value is a request that reached no engine call.
type access struct {
	start     time.Time
	model     string // as the client sent it
	route     string
	target    string // the target that answered (a continued stream's last)
	attempts  int
	fallbacks int
	requestID string // the upstream request id
	stream    bool
	embed     bool // an embeddings request
	// streamStatus is the status of the error event a stream ended with
	// after its 200 went out (0 = none).
	streamStatus int
	// malformed counts the stream events the engine skipped as malformed
	// (atomic: a hedge's losing stream may report from its goroutine).
	malformed atomic.Int64
	// For the metrics: the time to a stream's first chunk, the chunks
	// sent, the answer's usage and model.
	firstChunk time.Duration
	chunks     int
	usage      provider.Usage
	respModel  string
	// span is the request's trace span (nil: not traced).
	span *telemetry.Span
}

// accessOf returns the record of the request whose writer is w (nil when
// w is not the gateway's own; every method is nil-safe).
func accessOf(w http.ResponseWriter) *access {
	if tw, ok := w.(*trackingWriter); ok {
		return &tw.acc
	}
	return nil
}

// noteModel records the model a request named and whether it streams.
func (a *access) noteModel(model string, stream bool) {
	if a != nil {
		a.model, a.stream = model, stream
	}
}

// noteRoute records the engine route a request resolved to.
func (a *access) noteRoute(route string) {
	if a != nil {
		a.route = route
	}
}

// noteTarget records the target a stream continued on.
func (a *access) noteTarget(target string) {
	if a != nil {
		a.target = target
	}
}

// noteStreamError records the error event a stream ended with.
func (a *access) noteStreamError(status int) {
	if a != nil {
		a.streamStatus = status
	}
}

// noteChunk records a stream chunk sent to the client.
func (a *access) noteChunk(c *provider.Chunk) {
	if a == nil || a.start.IsZero() {
		return
	}
	if a.chunks == 0 {
		a.firstChunk = time.Since(a.start)
	}
	a.chunks++
	if c.Usage != nil {
		a.usage.Merge(*c.Usage)
	}
	if c.Model != "" {
		a.respModel = c.Model
	}
}

// noteAnswer records a whole answer's usage and model.
func (a *access) noteAnswer(resp *provider.Response) {
	if a != nil && resp != nil {
		a.usage, a.respModel = resp.Usage, resp.Model
	}
}

// noteFailure records a failed engine call's attempts, last target and
// last upstream request id.
func (a *access) noteFailure(err error) {
	var re *resilience.RouteError
	if a == nil || !errors.As(err, &re) {
		return
	}
	a.attempts = len(re.Attempts)
	for i, at := range re.Attempts {
		if i > 0 && at.Target != re.Attempts[i-1].Target {
			a.fallbacks++
		}
		a.target = at.Target
		if at.Err != nil && at.Err.Verdict.RequestID != "" {
			a.requestID = at.Err.Verdict.RequestID
		}
	}
}

// endAccess ends a request's record: it writes the access line when
// logged and counts the request in the metrics when there are any. What
// the response headers say (x-llmguard-target, -attempts, -fallbacks, the
// upstream request id) wins over what a failure left in the record: the
// line says what the client was told.
func (s *Server) endAccess(r *http.Request, tw *trackingWriter, dialect string, logged bool) {
	a := &tw.acc
	h := tw.Header()
	if v := headerOf(h, "X-Llmguard-Attempts"); v != "" {
		a.attempts, _ = strconv.Atoi(v)
		a.fallbacks, _ = strconv.Atoi(headerOf(h, "X-Llmguard-Fallbacks"))
		if t := headerOf(h, "X-Llmguard-Target"); t != "" && a.target == "" {
			a.target = t
		}
		if id := headerOf(h, "X-Llmguard-Upstream-Request-Id"); id != "" {
			a.requestID = id
		}
	}
	status := tw.status
	switch {
	case status == 0 && r.Context().Err() != nil:
		status = 499 // the client went away before an answer (nginx's code)
	case status == 0:
		status = http.StatusOK // a handler that wrote nothing
	}
	took := time.Since(a.start)
	if a.route != "" || a.span != nil {
		s.observe(tw, dialect, status, took)
	}
	if !logged {
		return
	}
	ms := math.Round(float64(took.Microseconds())/100) / 10
	var buf [16]slog.Attr // room for every attribute: no allocation
	attrs := append(buf[:0],
		slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.String("model", a.model), slog.String("route", a.route), slog.String("target", a.target),
		slog.Int("status", status), slog.Int("attempts", a.attempts), slog.Int("fallbacks", a.fallbacks),
		slog.Float64("ms", ms), slog.String("request_id", a.requestID))
	if v := headerOf(h, "X-Llmguard-Cost-Usd"); v != "" {
		f, _ := strconv.ParseFloat(v, 64)
		attrs = append(attrs, slog.Float64("cost_usd", f))
	}
	if v := headerOf(h, "X-Llmguard-Wasted-Usd"); v != "" {
		f, _ := strconv.ParseFloat(v, 64)
		attrs = append(attrs, slog.Float64("wasted_usd", f))
	}
	if a.stream {
		attrs = append(attrs, slog.Bool("stream", true))
	}
	if a.streamStatus != 0 {
		attrs = append(attrs, slog.Int("stream_error", a.streamStatus))
	}
	if n := a.malformed.Load(); n != 0 {
		attrs = append(attrs, slog.Int64("malformed_events", n))
	}
	if headerOf(h, "X-Llmguard-Cached") != "" {
		attrs = append(attrs, slog.Bool("cached", true))
	}
	// What s.log.LogAttrs does, less its stack walk for the caller's
	// program counter (runtime.Callers, a fifth of its cost): the caller is
	// always this function, whose counter is taken once. A handler that
	// adds the source prints the same one.
	ctx := context.Background()
	if !s.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "access", accessPC())
	rec.AddAttrs(attrs...)
	_ = s.log.Handler().Handle(ctx, rec)
}

// accessPCs holds the program counter access lines are logged from (0
// until the first).
var accessPCs atomic.Uintptr

// accessPC is the program counter of its caller (endAccess), as
// slog.Logger.LogAttrs finds its caller's, looked up once.
func accessPC() uintptr {
	if pc := accessPCs.Load(); pc != 0 {
		return pc
	}
	var pcs [1]uintptr
	runtime.Callers(2, pcs[:]) // skip runtime.Callers and accessPC
	accessPCs.Store(pcs[0])
	return pcs[0]
}

// observe counts an engine request in the metrics and ends its span.
func (s *Server) observe(tw *trackingWriter, dialect string, status int, took time.Duration) {
	a, h := &tw.acc, tw.Header()
	outcome := telemetry.OutcomeSuccess
	switch {
	case status == 499:
		outcome = telemetry.OutcomeCanceled
	case status >= 400 || a.streamStatus != 0:
		outcome = telemetry.OutcomeError
	case headerOf(h, "X-Llmguard-Cached") != "":
		outcome = telemetry.OutcomeCached
	case headerOf(h, "X-Llmguard-Static") != "":
		outcome = telemetry.OutcomeStatic
	}
	op := "chat"
	if a.embed {
		op = "embeddings"
	}
	target := a.target
	if outcome == telemetry.OutcomeError && a.streamStatus == 0 {
		target = "" // no target answered
	}
	rec := &telemetry.Request{Dialect: dialect, Operation: op, Route: a.route, Target: target,
		Outcome: outcome, Duration: took, FirstChunk: a.firstChunk, Chunks: a.chunks, Usage: a.usage,
		Model: a.respModel, Broken: a.streamStatus != 0}
	if v := headerOf(h, "X-Llmguard-Wasted-Usd"); v != "" {
		rec.WastedUSD, _ = strconv.ParseFloat(v, 64)
	}
	if a.route != "" {
		s.metrics.Request(rec)
	}
	a.span.End(rec, status)
}

// headerOf is h.Get of a key in canonical form, which it does not canonicalise
// again.
func headerOf(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// accessOn reports whether access lines are logged at all (the logger
// takes info), so a quiet gateway pays nothing for them.
func (s *Server) accessOn(r *http.Request) bool {
	return s.log.Enabled(r.Context(), slog.LevelInfo)
}
