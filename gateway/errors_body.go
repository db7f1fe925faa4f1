package gateway

import (
	"math"
	"net/http"
	"strconv"
)

// The error bodies of each dialect (see errors.go for what they carry).

// anthropicTypes are the error types of the Anthropic API.
var anthropicTypes = map[string]bool{"invalid_request_error": true, "authentication_error": true,
	"billing_error": true, "permission_error": true, "not_found_error": true, "request_too_large": true,
	"rate_limit_error": true, "api_error": true, "overloaded_error": true, "timeout_error": true}

// openAITypes are the error types of the OpenAI API (as the kinds map to).
var openAITypes = map[string]bool{"invalid_request_error": true, "authentication_error": true,
	"insufficient_quota": true, "permission_error": true, "rate_limit_error": true,
	"service_unavailable_error": true, "timeout_error": true, "server_error": true}

// anthropicType is the Anthropic error.type of an error: the provider's own
// when it is an Anthropic type, else its kind's.
func anthropicType(e *apiError) string {
	if anthropicTypes[e.ptype] {
		return e.ptype
	}
	switch e.kind {
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

// openAITypeCode is the OpenAI error type and code of an error: the
// provider's own type when it is an OpenAI type, its own code when it has
// one (an identifier such as invalid_api_key), else the kind's.
func openAITypeCode(e *apiError) (typ, code string) {
	typ, code = kindTypeCode(e.kind)
	switch {
	case openAITypes[e.ptype]:
		typ = e.ptype
	case isCode(e.ptype):
		code = e.ptype
	}
	return typ, code
}

func kindTypeCode(kind string) (typ, code string) {
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

// isCode reports an OpenAI-style error code: a lower-case identifier.
func isCode(s string) bool {
	if s == "" || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// oaError is an OpenAI error body.
type oaError struct {
	Error struct {
		Message   string  `json:"message"`
		Type      string  `json:"type"`
		Param     *string `json:"param"` // always null
		Code      *string `json:"code"`
		RequestID string  `json:"request_id,omitempty"`
	} `json:"error"`
}

func appendOpenAIError(b []byte, e *apiError) []byte {
	var v oaError
	typ, code := openAITypeCode(e)
	v.Error.Message, v.Error.Type, v.Error.RequestID = e.message, typ, e.requestID
	if code != "" {
		v.Error.Code = &code
	}
	return appendJSON(b, &v)
}

// anError is an Anthropic error body.
type anError struct {
	Type  string `json:"type"` // "error"
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID *string `json:"request_id"`
}

func appendAnthropicError(b []byte, e *apiError) []byte {
	v := anError{Type: "error"}
	v.Error.Type, v.Error.Message = anthropicType(e), e.message
	if e.requestID != "" {
		v.RequestID = &e.requestID
	}
	return appendJSON(b, &v)
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
	if e.target != "" {
		h.Set("X-Llmguard-Target", e.target)
	}
	if e.attempts > 0 || e.target != "" {
		h.Set("X-Llmguard-Attempts", strconv.Itoa(e.attempts))
	}
	if e.wasted > 0 {
		setCostHeaders(h, -1, e.wasted)
	}
	if e.repeat {
		h.Set("X-Llmguard-Repeat", "true")
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
