package gateway

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/llmguard/llmguard/resilience"
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
	// streamStatus is the status of the error event a stream ended with
	// after its 200 went out (0 = none).
	streamStatus int
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

// logAccess writes the request's access line. What the response headers
// say (x-llmguard-target, -attempts, -fallbacks, the upstream request id)
// wins over what a failure left in the record: the line says what the
// client was told.
func (s *Server) logAccess(r *http.Request, tw *trackingWriter) {
	a := &tw.acc
	h := tw.Header()
	if v := h.Get("X-Llmguard-Attempts"); v != "" {
		a.attempts, _ = strconv.Atoi(v)
		a.fallbacks, _ = strconv.Atoi(h.Get("X-Llmguard-Fallbacks"))
		if t := h.Get("X-Llmguard-Target"); t != "" && a.target == "" {
			a.target = t
		}
		if id := h.Get("X-Llmguard-Upstream-Request-Id"); id != "" {
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
	ms := math.Round(float64(time.Since(a.start).Microseconds())/100) / 10
	attrs := []slog.Attr{
		slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.String("model", a.model), slog.String("route", a.route), slog.String("target", a.target),
		slog.Int("status", status), slog.Int("attempts", a.attempts), slog.Int("fallbacks", a.fallbacks),
		slog.Float64("ms", ms), slog.String("request_id", a.requestID),
	}
	if a.stream {
		attrs = append(attrs, slog.Bool("stream", true))
	}
	if a.streamStatus != 0 {
		attrs = append(attrs, slog.Int("stream_error", a.streamStatus))
	}
	if h.Get("X-Llmguard-Cached") != "" {
		attrs = append(attrs, slog.Bool("cached", true))
	}
	s.log.LogAttrs(context.Background(), slog.LevelInfo, "access", attrs...)
}

// accessOn reports whether access lines are logged at all (the logger
// takes info), so a quiet gateway pays nothing for them.
func (s *Server) accessOn(r *http.Request) bool {
	return s.log.Enabled(r.Context(), slog.LevelInfo)
}
