package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// This file is the one place where failures become what the agent sees: an
// isError tool result of exactly one line.

// lineError is an error whose text is exactly one line.
type lineError string

func (e lineError) Error() string { return string(e) }

func panicError(tool string, p any) error {
	return lineError(classify.Line(fmt.Sprintf("llmguard internal error in %s: %v; this is a bug in llmguard (details in its log), retry once and report it if it persists", tool, p)))
}

func noKeyError(keyEnv []string) error {
	vars := strings.Join(keyEnv, ", ")
	return lineError(fmt.Sprintf("no LLM provider key: set one of %s for llmguard. MCP clients don't read your shell profile, so pass it with `claude mcp add llmguard -e %s=... -- llmguard mcp` or in the \"env\" block of the client's MCP config, then restart the client",
		vars, keyEnv[0]))
}

func configError(msg string) error {
	line := "llmguard is not configured: " + msg
	if !strings.Contains(msg, "shell profile") && !strings.Contains(msg, "env block") {
		line += "; fix it, then restart the MCP client (it passes variables only from its \"env\" block, not your shell profile)"
	}
	return lineError(classify.Line(line))
}

// describe turns an engine error into the one line the agent sees.
func (s *server) describe(ctx context.Context, err error) error {
	now := s.cfg.Now()
	if ctx.Err() == context.Canceled {
		return lineError("cancelled by the client; the upstream call was aborted")
	}
	if le, ok := errors.AsType[lineError](err); ok {
		return le
	}
	// A held failure (a repeat of a call the engine just retried to
	// exhaustion) reads as that failure, with a note, and no retry sooner
	// than the hold's end.
	var note string
	var held time.Time
	if re, ok := errors.AsType[*resilience.RouteError](err); ok && re.Repeat != nil {
		note, held, err = re.Repeat.Note(), re.Repeat.Until, re.Repeat.Of
	}
	at := func(pe *provider.Error) time.Time {
		if t := retryAt(err, pe, now); t.After(held) {
			return t
		}
		return held
	}
	pe := lastProviderError(err)
	attempts := countAttempts(err)
	var since time.Time
	if re, ok := errors.AsType[*resilience.RouteError](err); ok {
		// A failure no retry can clear (the request rejected, a bad key or
		// no credit on every target, also one a key's breaker holds) is the
		// line, as the gateway reports it.
		if tpe, s, _ := re.Terminal(); tpe != nil {
			pe, since = tpe, s
		}
	}
	switch {
	case errors.Is(err, resilience.ErrMaxCost):
		return lineError(classify.Line(fmt.Sprintf("%v; raise max_cost_usd, or shorten the prompt or max_tokens", err)))
	case errors.Is(err, resilience.ErrConcurrencyLimit):
		return lineError(classify.Line(fmt.Sprintf("%v; that is llmguard's own max_concurrency, not the provider: retry in a few seconds", err)))
	case errors.Is(err, resilience.ErrUnknownRoute):
		return lineError(classify.Line(fmt.Sprintf("%v; pass a route from llmguard's config or a provider/model target", err)))
	case errors.Is(err, resilience.ErrDeadline) || errors.Is(err, context.DeadlineExceeded):
		return s.deadlineError(pe, note, at(pe), now)
	case pe == nil && errors.Is(err, resilience.ErrNoTarget):
		return lineError(classify.Line(fmt.Sprintf("%v: every target is skipped (circuit breaker open, or no provider key: set %s in the client's \"env\" block); run llm_status to see why",
			err, strings.Join(s.cfg.KeyEnv, " or "))))
	case pe == nil:
		return lineError(classify.Line(fmt.Sprintf("llm call failed: %v", err)))
	}
	line := targetLine(pe)
	if !since.IsZero() {
		line += " (first seen " + clock(since, now) + ")"
	}
	if attempts > 0 && note == "" { // a repeat's note says how many
		line += fmt.Sprintf(" after %d attempt%s", attempts, plural(attempts))
	}
	if others := otherTargets(err, pe); others != "" {
		line += " (also failed: " + others + ")"
	}
	if note != "" {
		line += "; " + note
	}
	line += "; " + advice(pe.Verdict, at(pe), now)
	return lineError(classify.Line(line))
}

// deadlineError is the line for a call the tool's deadline cut: the last
// failure, a repeat's note, and when to retry.
func (s *server) deadlineError(pe *provider.Error, note string, at, now time.Time) error {
	line := fmt.Sprintf("no answer within this tool's %s deadline", s.cfg.ToolTimeout)
	if pe != nil {
		line += " (last: " + pe.Verdict.Message + ")"
	}
	if note != "" {
		line += "; " + note
	}
	if !at.IsZero() {
		line += "; retry after " + clock(at, now)
	} else {
		line += "; retry in a minute"
	}
	return lineError(classify.Line(line))
}

// targetLine is a provider failure as "provider/model: message (request-id
// …)".
func targetLine(pe *provider.Error) string {
	line := pe.Verdict.Message
	if line == "" {
		line = pe.Error()
	}
	if pe.Provider != "" {
		target := pe.Provider
		if pe.Model != "" {
			target += "/" + pe.Model
		}
		line = target + ": " + line
	}
	if !strings.Contains(line, "request-id") && pe.Verdict.RequestID != "" {
		line += " (request-id " + pe.Verdict.RequestID + ")"
	}
	return line
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// advice says what to do about a verdict once the engine has given up:
// for a transient failure, when to retry (the engine already retried and
// fell back); otherwise the classifier's advice.
func advice(v classify.Verdict, at, now time.Time) string {
	switch v.Class {
	case classify.RateLimited, classify.Overloaded, classify.ServerError, classify.Timeout, classify.Network:
		if !at.IsZero() {
			return "retry after " + clock(at, now)
		}
		return "retry in a minute"
	}
	return v.Advice()
}

// clock formats t as the agent should read it: a UTC time of day, or a full
// timestamp when it is not within the next day.
func clock(t, now time.Time) string {
	if t.Sub(now) < 20*time.Hour && t.After(now.Add(-time.Hour)) {
		return t.UTC().Format("15:04:05Z")
	}
	return t.UTC().Format(time.RFC3339)
}

// providerErrors lists the *provider.Errors in err's tree, depth first.
func providerErrors(err error) []*provider.Error {
	var out []*provider.Error
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if pe, ok := e.(*provider.Error); ok {
			out = append(out, pe)
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// lastProviderError is the last upstream failure worth reporting: a skipped
// mcp/sampling target never hides the real provider's failure.
func lastProviderError(err error) *provider.Error {
	pes := providerErrors(err)
	for i := len(pes) - 1; i >= 0; i-- {
		if pes[i].Provider != SamplingProvider || i == 0 {
			return pes[i]
		}
	}
	return nil
}

func countAttempts(err error) int {
	if re, ok := errors.AsType[*resilience.RouteError](err); ok {
		return len(re.Attempts)
	}
	return len(providerErrors(err))
}

// retryAt is when a retry may succeed: the engine's RetryAt, else the
// verdict's reset time or wait.
func retryAt(err error, pe *provider.Error, now time.Time) time.Time {
	if re, ok := errors.AsType[*resilience.RouteError](err); ok && !re.RetryAt.IsZero() {
		return re.RetryAt
	}
	if pe == nil {
		return time.Time{}
	}
	if !pe.Verdict.Until.IsZero() {
		return pe.Verdict.Until
	}
	if pe.Verdict.Wait > 0 {
		return now.Add(pe.Verdict.Wait)
	}
	return time.Time{}
}

// otherTargets names the targets that failed before the one reported, each
// with its status and provider type, so a fallback's own failure (a bad key)
// does not hide why the primary was left (overloaded).
func otherTargets(err error, reported *provider.Error) string {
	re, ok := errors.AsType[*resilience.RouteError](err)
	if !ok {
		return ""
	}
	var parts []string
	seen := map[string]bool{}
	failed := re.Attempts
	for _, s := range re.Skipped {
		if s.Fault != nil {
			failed = append(failed[:len(failed):len(failed)], resilience.AttemptError{Target: s.Target, Err: s.Fault})
		}
	}
	for _, a := range failed {
		if a.Err == reported || a.Err.Provider == SamplingProvider {
			continue
		}
		v := a.Err.Verdict
		desc := a.Target + " " + string(v.Class)
		if v.Status > 0 {
			desc = fmt.Sprintf("%s %d %s", a.Target, v.Status, v.ProviderType)
		}
		if !seen[a.Target] && a.Target != targetOf(reported) {
			seen[a.Target] = true
			parts = append(parts, strings.TrimSpace(desc))
		}
	}
	return strings.Join(parts, ", ")
}

// targetOf is the "provider/model" of a provider error.
func targetOf(pe *provider.Error) string {
	if pe.Model == "" {
		return pe.Provider
	}
	return pe.Provider + "/" + pe.Model
}
