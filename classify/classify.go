package classify

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// longWait is the server-requested delay beyond which a rate limit is
// treated as an exhausted quota (Azure's "retry after 86400 seconds").
const longWait = time.Hour

// strength says how much an identifier or status decides the class.
type strength uint8

const (
	none   strength = iota
	weak            // generic: the status or the message may refine it
	strong          // specific: only narrow message traps override it
)

// idClass maps one provider identifier (code, type, reason, status) to a class.
func idClass(id string) (Class, strength) {
	switch id {
	case "insufficient_quota", "billing_not_active", "credit_balance_exhausted",
		"organization_spend_limit_exceeded", "project_spend_limit_exceeded",
		"organization_usage_limit_exceeded", "enforced_spend_limit_reached", "billing_error",
		"billing_hard_limit_reached", "QUOTA_EXHAUSTED", "INSUFFICIENT_G1_CREDITS_BALANCE",
		"insufficient_credits", "payment_required":
		return QuotaExhausted, strong
	case "context_length_exceeded", "model_context_window_exceeded":
		return ContextLengthExceeded, strong
	case "invalid_api_key", "authentication_error", "API_KEY_INVALID", "invalid_authentication",
		"UNAUTHENTICATED", "unauthenticated", "UnrecognizedClientException", "invalid-api-key",
		"incorrect_api_key", "account_deactivated", "access_terminated", "API_KEY_EXPIRED":
		return Auth, strong
	case "permission_error", "PERMISSION_DENIED", "unsupported_country_region_territory",
		"request_forbidden", "permission-denied", "permission_denied", "AccessDeniedException",
		"API_KEY_SERVICE_BLOCKED", "CONSUMER_SUSPENDED", "SERVICE_DISABLED",
		"The caller does not have permission to execute the specified operation":
		return Permission, strong
	case "not_found_error", "model_not_found", "NOT_FOUND", "DeploymentNotFound",
		"ResourceNotFoundException", "not_found", "not-found", "404":
		return NotFound, strong
	case "rate_limit_exceeded", "rate_limit_error", "rate_limited", "slow_down",
		"RATE_LIMIT_EXCEEDED", "rateLimitExceeded", "ThrottlingException", "throttlingException",
		"tokens", "requests", "1300", "tokens_usage_based", "requests_usage_based", "rate-limit-exceeded":
		return RateLimited, strong
	case "overloaded_error", "server_is_overloaded", "MODEL_CAPACITY_EXHAUSTED",
		"service_tier_capacity_exceeded", "3505", "ModelNotReadyException", "engine_overloaded",
		"service_unavailable_error", "overloaded":
		return Overloaded, strong
	case "api_error", "server_error", "INTERNAL", "InternalServerException", "internalServerException",
		"internal_error", "ModelStreamErrorException", "modelStreamErrorException", "conflict_error",
		"ServiceUnavailableException", "serviceUnavailableException", "ModelErrorException":
		return ServerError, strong
	case "timeout_error", "DEADLINE_EXCEEDED", "ModelTimeoutException", "timeout", "request_timeout":
		return Timeout, strong
	case "request_too_large", "payload_too_large", "string_above_max_length":
		return RequestTooLarge, strong
	case "content_filter", "content_policy_violation", "ResponsibleAIPolicyViolation",
		"content_filtered", "moderation", "SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST":
		return ContentFiltered, strong
	case "RESOURCE_EXHAUSTED", "Some resource has been exhausted", "resource-exhausted", "resource_exhausted":
		return RateLimited, weak
	case "UNAVAILABLE", "unavailable":
		return ServerError, weak
	case "credit_limit":
		return QuotaExhausted, weak
	case "invalid_request_error", "INVALID_ARGUMENT", "FAILED_PRECONDITION", "ValidationException",
		"validationException", "invalid_argument", "invalid-argument", "Client specified an invalid argument",
		"unsupported_parameter", "unsupported_value", "invalid_value", "invalid_type", "bad_request",
		"badRequest", "invalid_request", "OUT_OF_RANGE", "missing_required_parameter":
		return InvalidRequest, weak
	}
	return Unknown, none
}

// statusClass maps an HTTP status alone to a class.
func statusClass(status int) Class {
	switch {
	case status == 400, status == 405, status == 406, status == 415, status == 422:
		return InvalidRequest
	case status == 401:
		return Auth
	case status == 402:
		return QuotaExhausted
	case status == 403:
		return Permission
	case status == 404:
		return NotFound
	case status == 408:
		return Timeout
	case status == 409:
		return ServerError
	case status == 413:
		return RequestTooLarge
	case status == 429:
		return RateLimited
	case status == 504:
		return Timeout
	case status == 529:
		return Overloaded
	case status >= 500 && status <= 599:
		return ServerError
	case status >= 400 && status <= 499:
		return InvalidRequest
	}
	return Unknown
}

// Classify decides what a provider failure means. It looks at the body's
// code/type/reason fields first, then the status, then the message text,
// and reads every wait hint in the headers and body. It parses at most the
// first 64 KiB of in.Body and never panics. It is safe for concurrent use.
func Classify(in Input) Verdict {
	now := in.Now
	if now.IsZero() {
		now = time.Now()
	}
	if in.Status == 0 && in.Err != nil {
		return classifyTransport(in.Err, in.Header)
	}
	rep := parseBody(in.Body)
	status := in.Status
	if status >= 200 && status < 300 {
		if !rep.isError {
			if in.Err != nil {
				return classifyTransport(in.Err, in.Header)
			}
			v := Verdict{Status: status, Class: Unknown, Scope: ScopeRequest,
				ProviderType: rep.ptype}
			x := readHdr(in.Header)
			v.RequestID = requestID(&x, &rep)
			v.Message = formatMessage(status, "", "no error found in the response body", v.RequestID)
			return v
		}
		rep.stream = true
	}
	return decide(&rep, status, in.Header, now)
}

// ClassifyStreamError classifies one event-stream event's JSON data (an
// Anthropic "error" event, an OpenAI Responses "error" or "response.failed"
// event, an OpenRouter chunk with finish_reason "error", a Gemini chunk
// with promptFeedback.blockReason). It reports false when the event is not
// an error. provider is informational ("" or "auto" to guess). It is safe
// for concurrent use.
func ClassifyStreamError(provider string, data []byte, h http.Header) (Verdict, bool) {
	_ = provider
	t := trimSpace(data)
	if len(t) > maxBody {
		t = t[:maxBody]
	}
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return Verdict{}, false
	}
	var rep bodyReport
	if !parseJSON(string(t), &rep, 0) || !rep.isError {
		return Verdict{}, false
	}
	rep.format, rep.stream = fmtSSE, true
	return decide(&rep, http.StatusOK, h, time.Now()), true
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// decide turns a body report plus status and headers into a verdict.
func decide(rep *bodyReport, status int, h http.Header, now time.Time) Verdict {
	// The status that speaks for the error: a stream error in a 200 may
	// carry its own HTTP-like code (OpenRouter error.code, problem+json status).
	x := readHdr(h)
	if k := x.v[hAmznType]; k != "" {
		if i := strings.IndexByte(k, ':'); i >= 0 {
			k = k[:i]
		}
		rep.prependID(k)
		if rep.ptype == "" {
			rep.ptype = k
		}
	}
	eff := status
	if (eff < 400) && rep.bodyCode >= 400 && rep.bodyCode <= 599 {
		eff = rep.bodyCode
	}

	// 1. Identifiers, most specific first.
	cls, str := Unknown, none
	weakCls := Unknown
	matched := ""
	for i := range rep.ids {
		c, s := idClass(rep.ids[i])
		if s == strong {
			cls, str, matched = c, strong, rep.ids[i]
			break
		}
		if s == weak && weakCls == Unknown {
			weakCls = c
			matched = rep.ids[i]
		}
	}
	// 2. Status, which beats a generic identifier unless it says nothing.
	if str != strong {
		sc := statusClass(eff)
		switch {
		case rep.blockReason != "":
			cls, str = ContentFiltered, strong
		case weakCls != Unknown && (sc == Unknown || sc == InvalidRequest || weakCls == QuotaExhausted && sc == RateLimited):
			cls, str = weakCls, weak
		case sc != Unknown:
			cls, str = sc, weak
			if weakCls == RateLimited && sc == QuotaExhausted {
				cls = QuotaExhausted
			}
		case weakCls != Unknown:
			cls, str = weakCls, weak
		case rep.stream:
			// An error event with nothing recognisable: the stream broke.
			cls, str = ServerError, weak
		}
	}
	if rep.format == fmtHTML && eff >= 500 {
		cls = ServerError
	}

	// 3. Message text traps.
	rep.message = collapse(rep.message)
	ph, msgWait := scanPhrases(rep.message)
	if rep.limitZero {
		ph |= phLimitZero
	}
	cls = refineByMessage(cls, str, ph, eff)

	// Waits: the largest relevant hint wins.
	hh := readHeaderHints(&x, now)
	wait := hh.wait
	if rep.retryDelay > wait {
		wait = rep.retryDelay
	}
	if rep.bodyRetryWait > wait {
		wait = rep.bodyRetryWait
	}
	if msgWait > wait {
		wait = msgWait
	}

	var until time.Time
	switch {
	case cls == RateLimited && rep.perDay:
		cls = QuotaExhausted
	case cls == RateLimited && wait > longWait:
		cls = QuotaExhausted
	}
	if cls == QuotaExhausted && rep.limitSource == "openrouter_in_flight_budget" && wait > 0 {
		cls = RateLimited // the one retryable 402: an in-flight budget, with Retry-After
	}
	if cls == QuotaExhausted {
		switch {
		case rep.perDay:
			until = nextPacificMidnight(now)
		case !rep.resetAt.IsZero() && rep.resetAt.After(now):
			until = rep.resetAt
		case rep.resetDelay > 0:
			until = now.Add(rep.resetDelay).UTC().Truncate(time.Second)
		case hasID(rep, "enforced_spend_limit_reached"):
			until = firstOfNextMonth(now)
		case wait > longWait:
			until = now.Add(wait).UTC().Truncate(time.Second)
		}
	}

	v := Verdict{Status: status, Class: cls, ProviderType: truncate(clean(rep.ptype), 120)}
	v.Retryable, v.Scope, v.Fallback = defaults(cls)
	if cls == NotFound && (ph&phModel != 0 ||
		matched == "model_not_found" || matched == "DeploymentNotFound") {
		v.Scope, v.Fallback = ScopeModel, true
	}
	if cls == RequestTooLarge && ph&phTPM != 0 {
		v.Fallback = true // another target's token budget may be larger
	}
	// x-should-retry and a problem+json "retryable" override the status,
	// but never a trap that can only fail again.
	override := int8(0)
	if rep.bodyRetryable != nil {
		override = -1
		if *rep.bodyRetryable {
			override = 1
		}
	}
	if hh.shouldRetry != 0 {
		override = hh.shouldRetry
	}
	switch {
	case override < 0:
		v.Retryable = false
	case override > 0 && !terminal(cls):
		v.Retryable = true
	}
	if v.Retryable {
		v.Wait = wait
	}
	v.Until = until
	v.RequestID = requestID(&x, rep)
	v.Message = buildMessage(status, rep, v.ProviderType, v.RequestID)
	return v
}

// refineByMessage applies the traps that only the message text reveals.
func refineByMessage(cls Class, str strength, ph phrases, status int) Class {
	if ph == 0 {
		return cls
	}
	protected := func(cs ...Class) bool {
		for _, c := range cs {
			if cls == c && str == strong {
				return true
			}
		}
		return false
	}
	switch {
	case ph&phTooLarge != 0 &&
		!protected(Auth, Permission, NotFound, ContentFiltered, QuotaExhausted, ContextLengthExceeded):
		return RequestTooLarge
	case ph&phContext != 0 &&
		!protected(Auth, Permission, NotFound, ContentFiltered, QuotaExhausted, RequestTooLarge):
		return ContextLengthExceeded
	case ph&(phQuota|phLimitZero) != 0 &&
		!protected(Auth, NotFound, ContentFiltered, ContextLengthExceeded, RequestTooLarge, ServerError, Overloaded):
		return QuotaExhausted
	case ph&phAuth != 0 && (cls == Unknown || cls == InvalidRequest || cls == Permission || str != strong):
		return Auth
	case cls == QuotaExhausted && str != strong && ph&phRateText != 0:
		// Together's type:"credit_limit" on a plain RPM limit.
		if status != 402 {
			return RateLimited
		}
	case ph&phOverload != 0 && ph&phUpstreamRL == 0 &&
		(cls == ServerError || cls == Unknown || cls == RateLimited || cls == Timeout ||
			(cls == InvalidRequest && str != strong && status >= 429)):
		return Overloaded
	case ph&phRegion != 0 && cls == InvalidRequest && str != strong:
		return Permission
	case ph&phContent != 0 && (cls == InvalidRequest || cls == Permission) && str != strong:
		return ContentFiltered
	}
	return cls
}

func containsAny(s string, subs ...string) bool {
	for _, p := range subs {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func hasID(rep *bodyReport, id string) bool {
	for i := range rep.ids {
		if rep.ids[i] == id {
			return true
		}
	}
	return false
}

// terminal classes can only fail again for the same request and key.
func terminal(c Class) bool {
	switch c {
	case QuotaExhausted, RequestTooLarge, ContextLengthExceeded, Auth, Permission, ContentFiltered, NotFound:
		return true
	}
	return false
}

// defaults gives a class's retryable, scope and fallback.
func defaults(c Class) (bool, Scope, bool) {
	switch c {
	case RateLimited, Overloaded, ServerError, Timeout:
		return true, ScopeModel, true
	case Network:
		return true, ScopeProvider, true
	case QuotaExhausted, Auth, Permission:
		return false, ScopeKey, true
	case ContextLengthExceeded:
		return false, ScopeRequest, true
	}
	return false, ScopeRequest, false
}

// requestID picks the provider's request id: headers first, then the body,
// then an id quoted inside the message.
func requestID(x *hdr, rep *bodyReport) string {
	for _, v := range x.v[hRequestID:] {
		if v != "" {
			return truncate(clean(v), 80)
		}
	}
	if rep.reqID != "" {
		return truncate(clean(rep.reqID), 80)
	}
	if i := indexFold(rep.message, "request id "); i >= 0 {
		s := rep.message[i+len("request id "):]
		j := 0
		for j < len(s) && isKeyChar(s[j]) {
			j++
		}
		if j >= 8 {
			return truncate(s[:j], 80)
		}
	}
	return ""
}

// buildMessage renders the one-line message:
// "<status> <provider_type>: <message> (request-id <id>)".
// ptype is the already cleaned provider type.
func buildMessage(status int, rep *bodyReport, ptype, reqID string) string {
	switch rep.format {
	case fmtHTML:
		return formatMessage(status, "html error page from proxy", strconv.Quote(truncate(clean(rep.message), 120)), reqID)
	case fmtEmpty:
		return formatMessage(status, "", "empty body", reqID)
	}
	label := ptype
	if rep.stream && status >= 200 && status < 300 {
		where := " (in stream)"
		if rep.format != fmtSSE {
			where = " (in a 200 response)"
		}
		if label == "" {
			label = "error"
		}
		label += where
	}
	msg := rep.message
	if msg == "" && rep.format == fmtSSE && !rep.isError {
		msg = "event stream without an error event"
	}
	return formatMessage(status, label, msg, reqID)
}

func formatMessage(status int, label, msg, reqID string) string {
	var num [8]byte
	head := strconv.AppendInt(num[:0], int64(status), 10)
	if label == "" {
		label = strings.ToLower(http.StatusText(status))
	}
	label = truncate(clean(label), 60)
	msg = clean(msg) // cheap when the caller already collapsed it
	const tailOpen, tailClose = " (request-id ", ")"
	tailLen := 0
	if reqID != "" {
		tailLen = len(tailOpen) + len(reqID) + len(tailClose)
	}
	headLen := len(head)
	if label != "" {
		headLen += 1 + len(label)
	}
	budget := maxMessage - headLen - tailLen - 2
	if tailLen > 0 && msg != "" && len(msg) <= maxMessage-headLen-2 && strings.Contains(msg, reqID) {
		tailLen, budget = 0, len(msg) // the id is already in a message that fits
	}
	budget = max(budget, 20)
	var b strings.Builder
	b.Grow(headLen + 2 + min(len(msg), budget+3) + tailLen)
	b.Write(head)
	if label != "" {
		b.WriteByte(' ')
		b.WriteString(label)
	}
	if msg != "" {
		b.WriteString(": ")
		writeTruncated(&b, msg, budget)
	}
	if tailLen > 0 {
		b.WriteString(tailOpen)
		b.WriteString(reqID)
		b.WriteString(tailClose)
	}
	return b.String()
}
