package gateway

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// This file and errors_body.go are the one place where engine outcomes and
// gateway faults become HTTP statuses, headers and dialect error bodies:
// here the status, kind and message of each; there each dialect's body.

// Error kinds, dialect-neutral. Each maps to an OpenAI type/code and an
// Anthropic error type below.
const (
	kindInvalidRequest  = "invalid_request"
	kindAuthentication  = "authentication"
	kindBilling         = "billing"
	kindPermission      = "permission"
	kindNotFound        = "not_found"
	kindRequestTooLarge = "request_too_large"
	kindRateLimit       = "rate_limit"
	kindOverloaded      = "overloaded"
	kindAPI             = "api_error"
	kindTimeout         = "timeout"
)

// apiError is an error on its way to a client.
type apiError struct {
	status     int
	kind       string
	message    string // one line
	requestID  string // the upstream request id, if any
	retryAfter time.Duration
	// retry is the x-should-retry header: "" none, "true" or "false".
	retry string
	// ptype is the provider's own error type or code, passed on where the
	// client's dialect has it ("" = the kind's).
	ptype string
	// target and attempts are the x-llmguard-target and -attempts headers
	// of a failed call (target "" = none).
	target   string
	attempts int
	// wasted is what the failed call's attempts cost (x-llmguard-wasted-usd).
	wasted float64
	// repeat: the answer is a held failure (x-llmguard-repeat: true).
	repeat bool
}

func (e *apiError) Error() string { return e.message }

// line is a verdict's one line as the message of an error sent with
// status: without a leading status equal to it, since client SDKs print
// the status before the message ("429 429 rate_limit…" otherwise).
func line(status int, msg string) string {
	msg = classify.Line(msg)
	st := strconv.Itoa(status)
	if rest, ok := strings.CutPrefix(msg, st+" "); ok && rest != "" {
		return rest
	}
	return msg
}

// Gateway-side faults.

func errBadRequest(msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, kind: kindInvalidRequest, message: classify.Line(msg), retry: "false"}
}

func errTooLarge(limit int64) *apiError {
	return &apiError{status: http.StatusRequestEntityTooLarge, kind: kindRequestTooLarge,
		message: "request body exceeds the gateway's limit of " + strconv.FormatInt(limit, 10) + " bytes", retry: "false"}
}

func errUnauthorized() *apiError {
	return &apiError{status: http.StatusUnauthorized, kind: kindAuthentication,
		message: "invalid or missing gateway key (send Authorization: Bearer <key> or x-api-key)", retry: "false"}
}

// errUnknownModel is a model name the gateway could not resolve (err is a
// *catalog.UnknownModelError: it names both ways to fix it).
func errUnknownModel(err error) *apiError {
	return &apiError{status: http.StatusNotFound, kind: kindNotFound, retry: "false", message: classify.Line(err.Error())}
}

func errInternal(msg string) *apiError {
	return &apiError{status: http.StatusInternalServerError, kind: kindAPI, message: classify.Line(msg), retry: "false"}
}

// fromEngine maps a failed engine call to the client-facing error:
//   - a failure no retry can clear (resilience.RouteError.Terminal: the
//     request rejected on every attempt, or a bad key, no credit or billing
//     on every target, also while a key's breaker holds it): the provider's
//     own status and error type with its one line (and, when an earlier
//     call saw it, when that was), x-should-retry: false;
//   - every target rate limited: 429; the call's deadline: 504; anything
//     else (targets down, breakers open, no slot of any target's
//     concurrency limit in time: ErrConcurrencyLimit): 503;
//   - a repeat the engine answered with a held failure (ErrRepeat): that
//     failure, as repeatError says.
//
// Retry-After is the earliest moment a target will be tried again, sent
// only when it is at most the route's max_client_wait away; for
// ErrConcurrencyLimit, which has no such moment (a slot frees when any
// call in flight ends), concurrencyRetry. x-should-retry
// is true only when the call made no upstream attempt (every target was
// skipped) and a retry within max_client_wait may pass: once the gateway
// spent its own retries, client retries would only multiply them.
func fromEngine(err error, now time.Time) *apiError {
	if errors.Is(err, resilience.ErrUnknownRoute) {
		return &apiError{status: http.StatusNotFound, kind: kindNotFound, message: classify.Line(err.Error()), retry: "false"}
	}
	if errors.Is(err, resilience.ErrMaxCost) {
		// The request's own ceiling turned every target away: no retry
		// passes under it.
		return errBadRequest(err.Error())
	}
	var re *resilience.RouteError
	var last *provider.Error
	if errors.As(err, &re) {
		if re.Repeat != nil {
			return repeatError(re, now)
		}
		last = re.Last()
	} else {
		last = provider.AsError(err)
	}
	if re == nil {
		re = &resilience.RouteError{Route: "?", Err: err, ClientWait: *resilience.DefaultRoute().MaxClientWait}
		if last != nil {
			re.Attempts = []resilience.AttemptError{{Target: targetOf(last), Err: last}}
		}
	}
	if pe, since, target := re.Terminal(); pe != nil {
		return terminalError(re, pe, since, target, now)
	}
	e := &apiError{status: http.StatusServiceUnavailable, kind: kindOverloaded, retry: "false",
		attempts: len(re.Attempts), wasted: re.Wasted}
	switch {
	case len(re.Attempts) == 0 && len(re.Skipped) == 0:
		e.message = classify.Line(err.Error())
	case distinctTargets(re) > 1 || len(re.Skipped) > 0:
		// Several targets failed: the route's line names each one's
		// verdict and ends with the last request id.
		e.message = classify.Line(re.Error())
	default:
		e.message = last.Verdict.Message
	}
	if last != nil {
		e.requestID = last.Verdict.RequestID
		e.target = re.Attempts[len(re.Attempts)-1].Target
	}
	switch {
	case re.AllRateLimited():
		e.status, e.kind = http.StatusTooManyRequests, kindRateLimit
	case errors.Is(err, resilience.ErrDeadline) || errors.Is(err, context.DeadlineExceeded):
		e.status, e.kind = http.StatusGatewayTimeout, kindTimeout
	}
	e.message = line(e.status, e.message)
	wait := retryAt(re, last, now)
	if wait <= 0 && errors.Is(err, resilience.ErrConcurrencyLimit) {
		wait = concurrencyRetry
	}
	if wait > 0 && wait <= re.ClientWait {
		e.retryAfter = wait
	}
	if len(re.Attempts) == 0 && (wait <= 0 || e.retryAfter > 0) && re.ClientWait > 0 {
		e.retry = "true" // nothing spent, and the refusal may end soon
	}
	return e
}

// concurrencyRetry is the Retry-After of a call no target had a
// concurrency slot for: the shortest the header says.
const concurrencyRetry = time.Second

// repeatError is a call the engine answered with the held failure of an
// identical call it retried to exhaustion moments before: that failure as
// it was reported (status, type, line), with the repeat's note, no upstream
// attempt, x-llmguard-repeat: true and x-should-retry: false. Its
// Retry-After is never sooner than the hold's end (a retry before it gets
// the same answer): the hold's end when that is within max_client_wait,
// else none. The AI SDK sleeps a retry-after under 60 s, LangChain stops on
// a 429 without one; the OpenAI and Anthropic SDKs don't retry either way.
func repeatError(re *resilience.RouteError, now time.Time) *apiError {
	r := re.Repeat
	e := fromEngine(r.Of, now)
	e.attempts, e.retry, e.repeat = 0, "false", true
	e.message = line(e.status, e.message+"; "+r.Note())
	e.retryAfter = 0
	if d := max(r.Until.Sub(now), retryAt(r.Of, nil, now)); d > 0 && d <= re.ClientWait {
		e.retryAfter = d
	}
	return e
}

// terminalError is a failure no retry can clear: the provider's own status
// (a 4xx; else the class's) and type, its line, when it was first seen
// (a key fault an earlier call saw), and the other targets' failures.
func terminalError(re *resilience.RouteError, pe *provider.Error, since time.Time, target string, now time.Time) *apiError {
	v := &pe.Verdict
	st, kind := requestFault(v.Class)
	if v.Status >= 400 && v.Status < 500 {
		st = v.Status
	}
	e := &apiError{status: st, kind: kind, ptype: v.ProviderType, requestID: v.RequestID, retry: "false",
		target: target, attempts: len(re.Attempts), wasted: re.Wasted}
	msg := v.Message
	if !since.IsZero() {
		msg = withNote(msg, "first seen "+since.UTC().Format(time.RFC3339))
	}
	if others := otherFailures(re, target); others != "" {
		msg += "; also: " + others
	}
	e.message = line(st, msg)
	if d := v.Until.Sub(now); !v.Until.IsZero() && d > 0 && d <= re.ClientWait {
		e.retryAfter = d // a quota that resets soon: true, though not for a blind retry
	}
	return e
}

// withNote adds note to a verdict line: inside its closing "(request-id
// …)" when it has one, else in parentheses of its own.
func withNote(msg, note string) string {
	if strings.HasSuffix(msg, ")") && strings.Contains(msg, "(request-id ") {
		return msg[:len(msg)-1] + "; " + note + ")"
	}
	return msg + " (" + note + ")"
}

// otherFailures names the targets other than the one reported, each with
// its last verdict, e.g. "openai/gpt-4o auth 401".
func otherFailures(re *resilience.RouteError, reported string) string {
	var parts []string
	seen := map[string]bool{reported: true}
	add := func(target string, v *classify.Verdict) {
		if seen[target] {
			return
		}
		seen[target] = true
		p := target + " " + string(v.Class)
		if v.Status != 0 {
			p += " " + strconv.Itoa(v.Status)
		}
		parts = append(parts, p)
	}
	for i := len(re.Attempts) - 1; i >= 0; i-- {
		a := re.Attempts[i]
		add(a.Target, &a.Err.Verdict)
	}
	for _, s := range re.Skipped {
		if s.Fault != nil {
			add(s.Target, &s.Fault.Verdict)
		}
	}
	return strings.Join(parts, ", ")
}

func targetOf(pe *provider.Error) string {
	if pe.Model == "" {
		return pe.Provider
	}
	return pe.Provider + "/" + pe.Model
}

func distinctTargets(re *resilience.RouteError) int {
	n := 0
	for i, a := range re.Attempts {
		if i == 0 || a.Target != re.Attempts[i-1].Target {
			n++
		}
	}
	return n
}

// retryAt is how long from now the engine says a retry could succeed.
func retryAt(re *resilience.RouteError, last *provider.Error, now time.Time) time.Duration {
	if re != nil && !re.RetryAt.IsZero() {
		return re.RetryAt.Sub(now)
	}
	if last != nil {
		return last.Verdict.Wait
	}
	return 0
}

// requestFault maps a class that no retry can clear to the status (when the
// provider's own is not a 4xx) and kind passed through to the client.
func requestFault(c classify.Class) (int, string) {
	switch c {
	case classify.Auth:
		return http.StatusUnauthorized, kindAuthentication
	case classify.QuotaExhausted:
		return http.StatusPaymentRequired, kindBilling
	case classify.Permission:
		return http.StatusForbidden, kindPermission
	case classify.NotFound:
		return http.StatusNotFound, kindNotFound
	case classify.RequestTooLarge:
		return http.StatusRequestEntityTooLarge, kindRequestTooLarge
	}
	return http.StatusBadRequest, kindInvalidRequest
}

// fromStream maps a failure after the first byte went out (a broken or
// stalled stream that could not be continued) to the error event that ends
// the stream in the client's dialect.
func fromStream(err error) *apiError {
	var re *resilience.RouteError
	var last *provider.Error
	if errors.As(err, &re) {
		last = re.Last()
	}
	if last == nil {
		last = provider.AsError(err)
	}
	e := &apiError{status: http.StatusBadGateway, kind: kindAPI, retry: "false",
		message: "stream interrupted: " + classify.Line(err.Error())}
	if last == nil {
		return e
	}
	e.message = "stream interrupted: " + classify.Line(last.Verdict.Message)
	e.requestID = last.Verdict.RequestID
	switch last.Verdict.Class {
	case classify.Overloaded, classify.ServerError:
		e.kind = kindOverloaded
	case classify.RateLimited:
		e.kind = kindRateLimit
	case classify.Timeout:
		e.kind = kindTimeout
	case classify.Auth, classify.QuotaExhausted, classify.Permission, classify.NotFound, classify.RequestTooLarge,
		classify.InvalidRequest, classify.ContextLengthExceeded, classify.ContentFiltered:
		_, e.kind = requestFault(last.Verdict.Class)
	}
	return e
}
