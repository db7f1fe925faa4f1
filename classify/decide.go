package classify

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// decide turns a body report plus status and headers into a verdict: the
// class from the identifiers, the status and the message, in that order
// (classOf, refineByMessage), then the waits, the reset time, the scope
// and whether to retry.
func decide(rep *bodyReport, status int, h http.Header, now time.Time) Verdict {
	x := readHdr(h)
	rep.headerKind(&x)
	// The status that speaks for the error: a stream error in a 200 may
	// carry its own HTTP-like code (OpenRouter error.code, problem+json status).
	eff := status
	if (eff < 400) && rep.bodyCode >= 400 && rep.bodyCode <= 599 {
		eff = rep.bodyCode
	}
	cls, str, matched := classOf(rep, eff)
	if rep.format == fmtHTML && eff >= 500 {
		cls = ServerError
	}

	// Message text traps.
	rep.message = collapse(rep.message)
	ph, msgWait := scanPhrases(rep.message)
	if rep.limitZero {
		ph |= phLimitZero
	}
	cls = refineByMessage(cls, str, ph, eff)

	// Waits: the largest relevant hint wins.
	hh := readHeaderHints(&x, now)
	wait := max(hh.wait, rep.retryDelay, rep.bodyRetryWait, msgWait)
	cls = refineByWait(cls, rep, wait)

	v := Verdict{Status: status, Class: cls, ProviderType: truncate(clean(rep.ptype), 120)}
	v.Retryable, v.Scope, v.Fallback = defaults(cls)
	if cls == NotFound && (ph&phModel != 0 ||
		matched == "model_not_found" || matched == "DeploymentNotFound") {
		v.Scope, v.Fallback = ScopeModel, true
	}
	if cls == RequestTooLarge && ph&phTPM != 0 {
		v.Fallback = true // another target's token budget may be larger
	}
	v.Retryable = retryOverride(v.Retryable, cls, rep, hh.shouldRetry)
	if v.Retryable {
		v.Wait = wait
	}
	if cls == QuotaExhausted {
		v.Until = quotaUntil(rep, wait, now)
	}
	v.RequestID = requestID(&x, rep)
	v.Message = buildMessage(status, rep, v.ProviderType, v.RequestID)
	return v
}

// headerKind puts the error kind an x-amzn-ErrorType header names first
// among the identifiers (Bedrock's body carries none).
func (rep *bodyReport) headerKind(x *hdr) {
	k := x.v[hAmznType]
	if k == "" {
		return
	}
	if i := strings.IndexByte(k, ':'); i >= 0 {
		k = k[:i]
	}
	rep.prependID(k)
	if rep.ptype == "" {
		rep.ptype = k
	}
}

// classOf decides the class from the identifiers, most specific first,
// then the status (eff), which beats a generic identifier unless it says
// nothing. matched is the identifier that decided, if any.
func classOf(rep *bodyReport, eff int) (cls Class, str strength, matched string) {
	cls, weakCls := Unknown, Unknown
	for _, id := range rep.ids {
		c, s := idClass(id)
		if s == strong {
			return c, strong, id
		}
		if s == weak && weakCls == Unknown {
			weakCls = c
			matched = id
		}
	}
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
	return cls, str, matched
}

// refineByMessage applies the traps that only the message text reveals.
// The first trap that applies decides (terminalTrap before otherTrap).
func refineByMessage(cls Class, str strength, ph phrases, status int) Class {
	if ph == 0 {
		return cls
	}
	if c, ok := terminalTrap(cls, str, ph); ok {
		return c
	}
	return otherTrap(cls, str, ph, status)
}

// terminalTrap applies the traps of a message that says the request can
// never pass as sent: too large, over the context window, out of quota.
// A strong identifier of another terminal class protects its class.
func terminalTrap(cls Class, str strength, ph phrases) (Class, bool) {
	protected := func(cs ...Class) bool {
		return str == strong && slices.Contains(cs, cls)
	}
	switch {
	case ph&phTooLarge != 0 &&
		!protected(Auth, Permission, NotFound, ContentFiltered, QuotaExhausted, ContextLengthExceeded):
		return RequestTooLarge, true
	case ph&phContext != 0 &&
		!protected(Auth, Permission, NotFound, ContentFiltered, QuotaExhausted, RequestTooLarge):
		return ContextLengthExceeded, true
	case ph&(phQuota|phLimitZero) != 0 &&
		!protected(Auth, NotFound, ContentFiltered, ContextLengthExceeded, RequestTooLarge, ServerError, Overloaded):
		return QuotaExhausted, true
	}
	return cls, false
}

// otherTrap applies the traps that turn a generic class into a specific
// one: a bad key, a plain rate limit under a credit type, an overload, a
// region block, a content filter.
func otherTrap(cls Class, str strength, ph phrases, status int) Class {
	switch {
	case ph&phAuth != 0 && (cls == Unknown || cls == InvalidRequest || cls == Permission || str != strong):
		return Auth
	case cls == QuotaExhausted && str != strong && ph&phRateText != 0:
		// Together's type:"credit_limit" on a plain RPM limit.
		if status != 402 {
			return RateLimited
		}
	case ph&phOverload != 0 && ph&phUpstreamRL == 0 && mayBeOverload(cls, str, status):
		return Overloaded
	case ph&phRegion != 0 && cls == InvalidRequest && str != strong:
		return Permission
	case ph&phContent != 0 && (cls == InvalidRequest || cls == Permission) && str != strong:
		return ContentFiltered
	}
	return cls
}

// mayBeOverload reports whether an overload message decides over cls: a
// transient class, or a generic 429-or-later invalid request (Mistral's
// "Service tier capacity exceeded", type invalid_request_error).
func mayBeOverload(cls Class, str strength, status int) bool {
	switch cls {
	case ServerError, Unknown, RateLimited, Timeout:
		return true
	case InvalidRequest:
		return str != strong && status >= 429
	}
	return false
}

// refineByWait turns a rate limit that lasts a day, or longer than
// longWait, into an exhausted quota, and OpenRouter's in-flight budget
// (the one retryable 402, with Retry-After) into a rate limit.
func refineByWait(cls Class, rep *bodyReport, wait time.Duration) Class {
	if cls == RateLimited && (rep.perDay || wait > longWait) {
		cls = QuotaExhausted
	}
	if cls == QuotaExhausted && rep.limitSource == "openrouter_in_flight_budget" && wait > 0 {
		cls = RateLimited
	}
	return cls
}

// quotaUntil is when an exhausted quota comes back, zero when unknown.
func quotaUntil(rep *bodyReport, wait time.Duration, now time.Time) time.Time {
	switch {
	case rep.perDay:
		return nextPacificMidnight(now)
	case !rep.resetAt.IsZero() && rep.resetAt.After(now):
		return rep.resetAt
	case rep.resetDelay > 0:
		return now.Add(rep.resetDelay).UTC().Truncate(time.Second)
	case slices.Contains(rep.ids, "enforced_spend_limit_reached"):
		return firstOfNextMonth(now)
	case wait > longWait:
		return now.Add(wait).UTC().Truncate(time.Second)
	}
	return time.Time{}
}

// retryOverride applies x-should-retry (shouldRetry: 1 true, -1 false) and
// a problem+json "retryable" to the class's retryable: they override the
// status, but never a trap that can only fail again.
func retryOverride(retryable bool, cls Class, rep *bodyReport, shouldRetry int8) bool {
	override := int8(0)
	if rep.bodyRetryable != nil {
		override = -1
		if *rep.bodyRetryable {
			override = 1
		}
	}
	if shouldRetry != 0 {
		override = shouldRetry
	}
	switch {
	case override < 0:
		return false
	case override > 0 && !terminal(cls):
		return true
	}
	return retryable
}
func containsAny(s string, subs ...string) bool {
	for _, p := range subs {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
