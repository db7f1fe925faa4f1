package gateway

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// This file is the one place where engine outcomes and gateway faults become
// HTTP statuses, headers and dialect error bodies.

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
}

func (e *apiError) Error() string { return e.message }

// anthropicType is the Anthropic error.type of a kind.
func anthropicType(kind string) string {
	switch kind {
	case kindInvalidRequest:
		return "invalid_request_error"
	case kindAuthentication:
		return "authentication_error"
	case kindBilling:
		return "billing_error"
	case kindPermission:
		return "permission_error"
	case kindNotFound:
		return "not_found_error"
	case kindRequestTooLarge:
		return "request_too_large"
	case kindRateLimit:
		return "rate_limit_error"
	case kindOverloaded:
		return "overloaded_error"
	case kindTimeout:
		return "timeout_error"
	}
	return "api_error"
}

// openAITypeCode is the OpenAI error type and code of a kind.
func openAITypeCode(kind string) (typ, code string) {
	switch kind {
	case kindInvalidRequest:
		return "invalid_request_error", ""
	case kindAuthentication:
		return "authentication_error", "invalid_api_key"
	case kindBilling:
		return "insufficient_quota", "insufficient_quota"
	case kindPermission:
		return "permission_error", ""
	case kindNotFound:
		return "invalid_request_error", "model_not_found"
	case kindRequestTooLarge:
		return "invalid_request_error", "request_too_large"
	case kindRateLimit:
		return "rate_limit_error", "rate_limit_exceeded"
	case kindOverloaded:
		return "service_unavailable_error", "service_unavailable"
	case kindTimeout:
		return "timeout_error", "timeout"
	}
	return "server_error", ""
}

func appendOpenAIError(b []byte, e *apiError) []byte {
	typ, code := openAITypeCode(e.kind)
	b = append(b, `{"error":{"message":`...)
	b = rawjson.AppendString(b, e.message)
	b = append(b, `,"type":`...)
	b = rawjson.AppendString(b, typ)
	b = append(b, `,"param":null,"code":`...)
	if code == "" {
		b = append(b, "null"...)
	} else {
		b = rawjson.AppendString(b, code)
	}
	if e.requestID != "" {
		b = append(b, `,"request_id":`...)
		b = rawjson.AppendString(b, e.requestID)
	}
	return append(b, `}}`...)
}

func appendAnthropicError(b []byte, e *apiError) []byte {
	b = append(b, `{"type":"error","error":{"type":`...)
	b = rawjson.AppendString(b, anthropicType(e.kind))
	b = append(b, `,"message":`...)
	b = rawjson.AppendString(b, e.message)
	b = append(b, `},"request_id":`...)
	if e.requestID == "" {
		b = append(b, "null"...)
	} else {
		b = rawjson.AppendString(b, e.requestID)
	}
	return append(b, '}')
}

// writeError writes e as a complete HTTP response in the client's dialect.
func writeError(w http.ResponseWriter, dialect string, e *apiError) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.retryAfter > 0 {
		secs := int64(math.Ceil(e.retryAfter.Seconds()))
		h.Set("Retry-After", strconv.FormatInt(secs, 10))
		h.Set("Retry-After-Ms", strconv.FormatInt(e.retryAfter.Milliseconds(), 10))
	}
	if e.retry != "" {
		h.Set("X-Should-Retry", e.retry)
	}
	if e.requestID != "" {
		h.Set("X-Llmguard-Upstream-Request-Id", e.requestID)
		if dialect == DialectAnthropic {
			h.Set("Request-Id", e.requestID) // the SDKs' err.requestID
		} else {
			h.Set("X-Request-Id", e.requestID)
		}
	}
	var b []byte
	if dialect == DialectAnthropic {
		b = appendAnthropicError(nil, e)
	} else {
		b = appendOpenAIError(nil, e)
	}
	w.WriteHeader(e.status)
	_, _ = w.Write(b)
}

// oneLine trims s to its first line and at most 400 bytes (on a rune
// boundary).
func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > 400 {
		i := 400
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + "…"
	}
	return s
}

// Gateway-side faults.

func errBadRequest(msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, kind: kindInvalidRequest, message: oneLine(msg), retry: "false"}
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
// *config.UnknownModelError: it names both ways to fix it).
func errUnknownModel(err error) *apiError {
	return &apiError{status: http.StatusNotFound, kind: kindNotFound, retry: "false", message: oneLine(err.Error())}
}

func errInternal(msg string) *apiError {
	return &apiError{status: http.StatusInternalServerError, kind: kindAPI, message: oneLine(msg), retry: "false"}
}

// fromEngine maps a failed engine call to the client-facing error:
//   - every target rate-limited: 429 with an accurate retry-after;
//   - the request itself at fault (every attempt ended in the same terminal
//     request, key or account fault): its status passed through
//     (400/401/402/403/404/413), x-should-retry: false;
//   - the deadline: 504; anything else (all down, breakers open): 503.
//
// The message is the last attempt's one-line verdict, which carries the
// upstream request id. Chains the gateway exhausted say x-should-retry: false
// so client SDKs don't multiply them.
func fromEngine(err error, now time.Time) *apiError {
	if errors.Is(err, resilience.ErrUnknownRoute) {
		return &apiError{status: http.StatusNotFound, kind: kindNotFound, message: oneLine(err.Error()), retry: "false"}
	}
	var last *provider.Error
	var re *resilience.RouteError
	if errors.As(err, &re) {
		last = re.Last()
	}
	if last == nil {
		last = provider.AsError(err)
	}
	e := &apiError{status: http.StatusServiceUnavailable, kind: kindOverloaded, retry: "false",
		message: oneLine(err.Error())}
	if last != nil {
		e.message = oneLine(last.Verdict.Message)
		e.requestID = last.Verdict.RequestID
	}
	if re != nil && (distinctTargets(re) > 1 || len(re.Skipped) > 0) {
		// Several targets failed: the route's line names each one's
		// verdict and ends with the last request id.
		e.message = oneLine(re.Error())
	}
	if re != nil && re.AllRateLimited() {
		e.status, e.kind, e.retry = http.StatusTooManyRequests, kindRateLimit, "true"
		e.retryAfter = retryAt(re, last, now)
		if e.retryAfter <= 0 {
			e.retryAfter = time.Second
		}
		return e
	}
	if last != nil && !last.Verdict.Retryable {
		if st, kind, ok := requestFault(last.Verdict); ok && sameFault(re, st) {
			e.status, e.kind = st, kind
			if re == nil || distinctTargets(re) == 1 {
				e.message = oneLine(last.Verdict.Message) // the request's own fault, as the provider said it
			}
			return e
		}
	}
	if errors.Is(err, resilience.ErrDeadline) || errors.Is(err, context.DeadlineExceeded) {
		e.status, e.kind = http.StatusGatewayTimeout, kindTimeout
		return e
	}
	if d := retryAt(re, last, now); d > 0 {
		e.retryAfter = d
	}
	return e
}

// sameFault reports whether every attempt of the route ended in a fault that
// maps to status: only then is the failure the request's (or the account's)
// own and passed through. A route whose primary was overloaded and whose
// fallback then had a bad key is not the client's fault: that is a 503
// naming both.
func sameFault(re *resilience.RouteError, status int) bool {
	if re == nil {
		return true
	}
	if len(re.Skipped) > 0 {
		return false // a target passed over (breaker open, cooldown) failed for its own reason
	}
	for _, a := range re.Attempts {
		if st, _, ok := requestFault(a.Err.Verdict); !ok || st != status || a.Err.Verdict.Retryable {
			return false
		}
	}
	return true
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

// requestFault maps a terminal verdict that blames the request, the key or
// the account to the status passed through to the client.
func requestFault(v classify.Verdict) (int, string, bool) {
	switch v.Class {
	case classify.InvalidRequest, classify.ContextLengthExceeded, classify.ContentFiltered:
		return http.StatusBadRequest, kindInvalidRequest, true
	case classify.Auth:
		return http.StatusUnauthorized, kindAuthentication, true
	case classify.QuotaExhausted:
		return http.StatusPaymentRequired, kindBilling, true
	case classify.Permission:
		return http.StatusForbidden, kindPermission, true
	case classify.NotFound:
		return http.StatusNotFound, kindNotFound, true
	case classify.RequestTooLarge:
		return http.StatusRequestEntityTooLarge, kindRequestTooLarge, true
	}
	return 0, "", false
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
		message: "stream interrupted: " + oneLine(err.Error())}
	if last == nil {
		return e
	}
	e.message = "stream interrupted: " + oneLine(last.Verdict.Message)
	e.requestID = last.Verdict.RequestID
	switch last.Verdict.Class {
	case classify.Overloaded, classify.ServerError:
		e.kind = kindOverloaded
	case classify.RateLimited:
		e.kind = kindRateLimit
	case classify.Timeout:
		e.kind = kindTimeout
	default:
		if _, kind, ok := requestFault(last.Verdict); ok {
			e.kind = kind
		}
	}
	return e
}
