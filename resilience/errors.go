package resilience

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
)

// AttemptError is one failed upstream attempt.
type AttemptError struct {
	// Target is the "provider/model" tried.
	Target string
	// Err is the attempt's failure; never nil.
	Err *provider.Error
}

// Skip is a target the call did not try, and why.
type Skip struct {
	Target string
	Reason string
}

// RouteError is a failed call: which targets were tried with what verdicts.
// Err is one of the package's sentinels (ErrExhausted, ErrNoTarget,
// ErrDeadline, ErrRejected, ErrUnknownRoute); errors.Is finds it, and
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
	// RetryAt is when the servers said to come back (the earliest such
	// time across the attempts; a quota reset counts), zero when unknown.
	RetryAt time.Time
}

// Error is one line naming each target tried and its last verdict, ending
// with the last provider request id, e.g.
//
//	route default: every target failed: deepseek/deepseek-chat overloaded 529 ×2; openai/gpt-4.1 rate_limited 429 (wait 20s); last request id req_123
func (e *RouteError) Error() string {
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
	return ""
}

// Unwrap returns the sentinel followed by every attempt's *provider.Error.
func (e *RouteError) Unwrap() []error {
	errs := make([]error, 0, len(e.Attempts)+1)
	if e.Err != nil {
		errs = append(errs, e.Err)
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

// AllRateLimited reports whether at least one attempt was made and every
// attempt was rate limited (an edge maps this to 429 with Retry-After).
func (e *RouteError) AllRateLimited() bool {
	if len(e.Attempts) == 0 {
		return false
	}
	for _, a := range e.Attempts {
		if a.Err.Verdict.Class != classify.RateLimited {
			return false
		}
	}
	return true
}
