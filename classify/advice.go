package classify

import (
	"strings"
	"time"
)

// Advice returns a short human "what to do" for v, e.g. "retry in 9.8s",
// "add credits or raise the spend limit", "fix the key in the client's env
// block" or "fall back to a model with a larger context window". decode,
// the MCP server and doctor all print it. It is safe for concurrent use.
func (v Verdict) Advice() string {
	switch v.Class {
	case RateLimited:
		if v.Wait > 0 {
			return "retry in " + fmtWait(v.Wait) + " (the server asked for it); meanwhile fall back to another model or key"
		}
		return "retry with backoff, or fall back to another model or key"
	case Overloaded:
		return "retry with backoff" + waitSuffix(v) + ", or fall back to another model or provider"
	case ServerError:
		return "retry with backoff" + waitSuffix(v) + "; fall back to another provider if it persists"
	case Timeout:
		return "retry; prefer streaming or raise the timeout for long generations"
	case Network:
		return "check the base URL, proxy and connectivity; retry, or fall back to another provider"
	case QuotaExhausted:
		s := "add credits or raise the spend limit"
		if !v.Until.IsZero() {
			s = "the quota resets at " + v.Until.UTC().Format(time.RFC3339) + "; add credits or upgrade the tier"
		}
		return s + "; fall back to another key or provider meanwhile (retrying will not help)"
	case Auth:
		return "fix the key in the client's env block (wrong, revoked or missing API key)"
	case Permission:
		return "this key may not use this model, region or feature; use another key or model"
	case NotFound:
		if v.Scope == ScopeModel {
			return "check the model or deployment name; fall back to another model"
		}
		return "check the endpoint URL and resource id"
	case InvalidRequest:
		if strings.Contains(strings.ToLower(v.Message), "anthropic-version") {
			return "send the anthropic-version header (e.g. 2023-06-01); retrying will not help"
		}
		return "fix the request (parameters, headers or format); retrying will not help"
	case ContextLengthExceeded:
		return "fall back to a model with a larger context window, or shorten the prompt"
	case RequestTooLarge:
		if v.Fallback {
			return "shrink the request below the per-minute token limit, or fall back to a target with a higher limit"
		}
		return "shrink the request (fewer tokens or bytes); retrying will not help"
	case ContentFiltered:
		return "the provider's safety filter blocked it: rephrase the prompt or use another model"
	}
	return "unrecognised failure: inspect the status and body; do not retry blindly"
}

func waitSuffix(v Verdict) string {
	if v.Wait > 0 {
		return " after " + fmtWait(v.Wait)
	}
	return ""
}

// fmtWait renders a wait compactly: "9.816s", "1m0s", "250ms".
func fmtWait(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}
