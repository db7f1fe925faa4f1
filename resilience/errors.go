package resilience

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
)

// Sentinel errors; a failed call returns a *RouteError that wraps one of them
// and every attempt's *provider.Error.
var (
	ErrUnknownRoute = errors.New("unknown route")
	ErrNoTarget     = errors.New("no target available")
	ErrExhausted    = errors.New("every target failed")
	ErrDeadline     = errors.New("deadline exceeded")
	// ErrRejected: the last failure forbids trying another target
	// (invalid_request, or a failure no eligible target can serve).
	ErrRejected = errors.New("request rejected")
	// ErrConcurrencyLimit: the call made no upstream attempt because no
	// target it could try had a free slot of its concurrency limit
	// (max_concurrency) before the route's queue_timeout or the call's
	// deadline ended the wait. The engine was busy, not the upstream: a
	// slot frees as soon as a call in flight ends.
	ErrConcurrencyLimit = errors.New("every target is at its concurrency limit")
)

// AttemptError is one failed upstream attempt.
type AttemptError struct {
	// Target is the "provider/model" tried.
	Target string
	// Err is the attempt's failure; never nil.
	Err *provider.Error
}

// Skip is a target the call did not try (or stopped trying), and why.
type Skip struct {
	// Target is the "provider/model" skipped.
	Target string
	// Reason is one line saying why.
	Reason string
	// Until is when the refusal ends, when known: the end of a rate-limit
	// cooldown or of an open breaker (a key-wide quota reset included).
	// Zero for refusals without a known end.
	Until time.Time
	// RateLimited reports a skip for a rate-limit cooldown (of the target or
	// of its provider key) started by an earlier call's 429.
	RateLimited bool
	// Fault is the failure that opened the provider key's breaker when it
	// blames the key or account (an invalid key, no credit, billing), as an
	// earlier call saw it, and Since when it was first seen; nil for other
	// skips. The target was refused for it, not for ill health.
	Fault *provider.Error
	Since time.Time
	// Ineligible reports a target passed over because the failure before it
	// may not fall back there (invalid_request, a context window no larger,
	// content_filtered without opt-in, a failure that never falls back).
	Ineligible bool
}

// skipMaxTotal is the reason of the skip that ends a call at its
// max_total_attempts: a limit of the call, not a state of the target.
const skipMaxTotal = "max_total_attempts reached"

// RouteError is a failed call: which targets were tried with what verdicts.
// Err is one of the package's sentinels (ErrExhausted, ErrNoTarget,
// ErrDeadline, ErrRejected, ErrUnknownRoute, ErrMaxCost, ErrConcurrencyLimit); errors.Is finds it, and
// errors.As finds every attempt's *provider.Error. The zero value is an
// empty error; a RouteError is immutable once returned and so safe to share.
type RouteError struct {
	// Route is the route's name.
	Route string
	// Err is the sentinel saying how the call ended.
	Err error
	// Attempts lists every failed attempt in order (hedged attempts included).
	Attempts []AttemptError
	// Skipped lists targets that were not tried (breaker open, cooldown,
	// budget, ineligible for this failure).
	Skipped []Skip
	// RetryAt is the earliest time a retry could be admitted: when the
	// servers said to come back (a wait or a quota reset), or when a
	// skipped target's rate-limit cooldown or open breaker ends (see
	// Skip.Until). Zero when unknown. A key fault without a known end (a
	// bad key) does not count: its breaker's end is only when the key is
	// tried again.
	RetryAt time.Time
	// ClientWait is the route's max_client_wait: the longest wait an edge
	// tells a client to sleep before a retry (Retry-After). Beyond it an
	// edge says not to retry.
	ClientWait time.Duration
	// Repeat is set when Err is ErrRepeat: the held failure the call was
	// answered with, without an upstream attempt (Attempts and Skipped
	// are empty; the held failure's are in Repeat.Of).
	Repeat *Repeat
	// Wasted is what the failed attempts cost in dollars (see Result.Wasted).
	Wasted float64
}

// Error is one line naming each target tried and its last verdict, ending
// with the last provider request id, e.g.
//
//	route default: every target failed: deepseek/deepseek-chat overloaded 529 ×2; openai/gpt-4.1 rate_limited 429 (wait 20s); last request id req_123
func (e *RouteError) Error() string {
	if e.Repeat != nil {
		return e.Repeat.Of.Error() + "; " + e.Repeat.Note()
	}
	var b strings.Builder
	b.WriteString("route ")
	b.WriteString(e.Route)
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("failed")
	}
	b.WriteString(":")
	sep := " "
	for i := 0; i < len(e.Attempts); {
		// Consecutive attempts on one target collapse into "×n" with the last verdict.
		j := i
		for j+1 < len(e.Attempts) && e.Attempts[j+1].Target == e.Attempts[i].Target {
			j++
		}
		a := e.Attempts[j]
		b.WriteString(sep)
		sep = "; "
		b.WriteString(a.Target)
		b.WriteByte(' ')
		b.WriteString(verdictLabel(&a.Err.Verdict))
		if n := j - i + 1; n > 1 {
			fmt.Fprintf(&b, " ×%d", n)
		}
		i = j + 1
	}
	for _, s := range e.Skipped {
		b.WriteString(sep)
		sep = "; "
		b.WriteString(s.Target)
		b.WriteString(" skipped (")
		b.WriteString(s.Reason)
		if s.Fault != nil {
			b.WriteString(": ")
			b.WriteString(verdictLabel(&s.Fault.Verdict))
			if !s.Since.IsZero() {
				b.WriteString(" since ")
				b.WriteString(s.Since.UTC().Format(time.RFC3339))
			}
		}
		b.WriteByte(')')
	}
	if len(e.Attempts) == 0 && len(e.Skipped) == 0 {
		b.WriteString(" no target tried")
	}
	b.WriteString("; last request id ")
	if id := e.lastRequestID(); id != "" {
		b.WriteString(id)
	} else {
		b.WriteString("none")
	}
	return b.String()
}

func verdictLabel(v *classify.Verdict) string {
	s := string(v.Class)
	if s == "" {
		s = string(classify.Unknown)
	}
	if v.Status != 0 {
		s += fmt.Sprintf(" %d", v.Status)
	}
	if v.Wait > 0 {
		s += fmt.Sprintf(" (wait %s)", v.Wait)
	}
	return s
}

func (e *RouteError) lastRequestID() string {
	for i := len(e.Attempts) - 1; i >= 0; i-- {
		if id := e.Attempts[i].Err.Verdict.RequestID; id != "" {
			return id
		}
	}
	for i := len(e.Skipped) - 1; i >= 0; i-- {
		if f := e.Skipped[i].Fault; f != nil && f.Verdict.RequestID != "" {
			return f.Verdict.RequestID
		}
	}
	return ""
}

// Unwrap returns the sentinel followed by every attempt's *provider.Error,
// and for a repeat the held failure (so errors.Is finds its sentinel too).
func (e *RouteError) Unwrap() []error {
	errs := make([]error, 0, len(e.Attempts)+2)
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	if e.Repeat != nil {
		errs = append(errs, e.Repeat.Of)
	}
	for _, a := range e.Attempts {
		errs = append(errs, a.Err)
	}
	return errs
}

// Last returns the last attempt's error, or nil when no attempt was made.
func (e *RouteError) Last() *provider.Error {
	if len(e.Attempts) == 0 {
		return nil
	}
	return e.Attempts[len(e.Attempts)-1].Err
}

// AllRateLimited reports whether the call failed only for rate limits (an
// edge maps this to 429 with Retry-After): at least one target was tried or
// skipped, every attempt was rate limited, and every target skipped without
// being tried was in a rate-limit cooldown (Skip.RateLimited). Skips of a
// target after its own attempts (its wait too long, its retry budget spent)
// and the call's max_total_attempts skip do not count against it.
func (e *RouteError) AllRateLimited() bool {
	if len(e.Attempts) == 0 && len(e.Skipped) == 0 {
		return false
	}
	for _, a := range e.Attempts {
		if a.Err.Verdict.Class != classify.RateLimited {
			return false
		}
	}
	for _, s := range e.Skipped {
		if s.RateLimited || s.Reason == skipMaxTotal || e.tried(s.Target) {
			continue
		}
		return false
	}
	return true
}

// tried reports whether target was attempted.
func (e *RouteError) tried(target string) bool {
	for _, a := range e.Attempts {
		if a.Target == target {
			return true
		}
	}
	return false
}

// Terminal returns the failure that ended the call when no retry can clear
// it by itself, with when it was first seen (zero when this call saw it),
// and its target; nil when some target failed for a reason that may pass
// (overload, a rate limit, a timeout, an open breaker, a cooldown). It is:
//   - the request's own fault: every attempt was rejected as invalid, too
//     large, over the context window or filtered (the last one is
//     returned; targets that were skipped did not see the request);
//   - else a fault of the request, the key or the account on every target:
//     each attempt ended in one that cannot pass (a bad key, no credit,
//     billing, permission, an unknown model, a rejected request), and each
//     target not tried was refused while its key's breaker held such a
//     fault (Skip.Fault) or was not eligible after one. The first such
//     attempt, else the first such skip, is returned.
func (e *RouteError) Terminal() (pe *provider.Error, since time.Time, target string) {
	if len(e.Attempts) > 0 {
		request := true
		for _, a := range e.Attempts {
			if !terminal(&a.Err.Verdict) || !requestClass(a.Err.Verdict.Class) {
				request = false
				break
			}
		}
		if request {
			a := e.Attempts[len(e.Attempts)-1]
			return a.Err, time.Time{}, a.Target
		}
	}
	for _, a := range e.Attempts {
		if !terminal(&a.Err.Verdict) {
			return nil, time.Time{}, ""
		}
	}
	var first *Skip
	for i := range e.Skipped {
		s := &e.Skipped[i]
		switch {
		case s.Fault != nil:
			if first == nil {
				first = s
			}
		case s.Ineligible, s.Reason == skipMaxTotal, e.tried(s.Target):
		default:
			return nil, time.Time{}, "" // refused for ill health or a cooldown
		}
	}
	if len(e.Attempts) > 0 {
		return e.Attempts[0].Err, time.Time{}, e.Attempts[0].Target
	}
	if first != nil {
		return first.Fault, first.Since, first.Target
	}
	return nil, time.Time{}, ""
}

// terminal reports a verdict that no retry of the same request can clear
// by itself: the request's, the key's or the account's fault.
func terminal(v *classify.Verdict) bool {
	if v.Retryable {
		return false
	}
	switch v.Class {
	case classify.Auth, classify.QuotaExhausted, classify.Permission, classify.NotFound:
		return true
	}
	return requestClass(v.Class)
}

// requestClass reports a class that blames the request itself.
func requestClass(c classify.Class) bool {
	switch c {
	case classify.InvalidRequest, classify.ContextLengthExceeded, classify.RequestTooLarge, classify.ContentFiltered:
		return true
	}
	return false
}
