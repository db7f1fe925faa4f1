package batch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// verdict is what a failed call means for the run.
type verdict int

const (
	// itemFault: the request's own fault (every target rejects it):
	// recorded as failed, the run goes on.
	itemFault verdict = iota
	// passing: every target is down, overloaded or rate limited: the item
	// goes back in the queue and the run pauses.
	passing
	// quotaReset: every target is out of a quota that resets at a known
	// time (a per-day quota): the item goes back and the run pauses until
	// then (or stops, past Config.NoWaitPast).
	quotaReset
	// accountFault: a bad key, no credit, no permission, an unknown model
	// on every target: the run stops; the item stays to do.
	accountFault
	// aborted: the run's context ended the call.
	aborted
)

// judgement is a failed call's verdict with what the run shows of it.
type judgement struct {
	verdict verdict
	// line is the one line: the verdict of the failure that decides.
	line string
	// class is the deciding failure's class (for the summary).
	class string
	// until is when a passing failure or a quota clears, when known.
	until time.Time
	// attempts counts the call's upstream attempts (all wasted).
	attempts int
}

// judge decides what a failed engine call means for the run.
func judge(ctx context.Context, err error, now time.Time) judgement {
	if ctx.Err() != nil {
		return judgement{verdict: aborted, line: "aborted before an answer came", class: string(StatusCanceled)}
	}
	re, ok := errors.AsType[*resilience.RouteError](err)
	if !ok {
		// Not the engine's outcome (a library caller's engine): judged by
		// its provider error if it has one, else as passing.
		j := judgement{verdict: passing, line: classify.Line(err.Error()), class: string(classify.Unknown)}
		if pe := provider.AsError(err); pe != nil {
			re = &resilience.RouteError{Err: err, Attempts: []resilience.AttemptError{{Target: pe.Provider + "/" + pe.Model, Err: pe}}}
		} else {
			return j
		}
	}
	j := judgement{attempts: len(re.Attempts), line: classify.Line(re.Error())}
	if errors.Is(err, resilience.ErrUnknownRoute) {
		j.verdict, j.class = accountFault, string(classify.NotFound)
		return j
	}
	if pe, since, target := re.Terminal(); pe != nil {
		v := &pe.Verdict
		j.class = string(v.Class)
		j.line = classify.Line(target + ": " + v.Message)
		if !since.IsZero() {
			j.line = classify.Line(fmt.Sprintf("%s: %s (since %s)", target, v.Message, since.UTC().Format(time.RFC3339)))
		}
		switch {
		case requestFault(v.Class):
			j.verdict = itemFault
		case v.Class == classify.QuotaExhausted && v.Until.After(now):
			j.verdict, j.until = quotaReset, v.Until
		default:
			j.verdict = accountFault
		}
		return j
	}
	j.verdict = passing
	if re.RetryAt.After(now) {
		j.until = re.RetryAt
	}
	j.class = string(classify.Unknown)
	if pe := re.Last(); pe != nil {
		j.class = string(pe.Verdict.Class)
	} else if errors.Is(err, resilience.ErrNoTarget) {
		j.class = "no_target"
	} else if errors.Is(err, resilience.ErrConcurrencyLimit) {
		j.class = "concurrency"
	}
	if errors.Is(err, resilience.ErrDeadline) {
		j.class = string(classify.Timeout)
	}
	return j
}

// requestFault reports a class that blames the request itself: another try
// of the same item fails the same way.
func requestFault(c classify.Class) bool {
	switch c {
	case classify.InvalidRequest, classify.ContextLengthExceeded, classify.RequestTooLarge, classify.ContentFiltered:
		return true
	}
	return false
}

// pauseWhy is the reason a passing failure gives for a pause, in a few words.
func pauseWhy(err error) string {
	re, ok := errors.AsType[*resilience.RouteError](err)
	switch {
	case !ok:
		return "the engine failed"
	case re.AllRateLimited():
		return "every target is rate limited"
	case len(re.Attempts) == 0:
		return "every target is skipped (breaker open or cooling down)"
	}
	return "every target is down or overloaded"
}
