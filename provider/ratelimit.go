package provider

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/llmguard/llmguard/classify"
)

// RateLimit is what a provider's response headers announce of the caller's
// rate limits (OpenAI and the compatible family's x-ratelimit-*, Azure's
// x-ratelimit-remaining-*, Anthropic's anthropic-ratelimit-*), on a success
// as on a failure. The engine paces a target by it. A nil *RateLimit means
// the response announced none (Gemini never does).
type RateLimit struct {
	// Requests is the request limit; Tokens the token limit (Anthropic's
	// combined tokens limit, else its input-tokens one).
	Requests, Tokens Quota
}

// Quota is one announced limit. The zero Quota announces nothing.
type Quota struct {
	// Limit is the most the limit allows (0: not announced; Azure's -1
	// and 0 mean unknown too).
	Limit int
	// Remaining is what is left now, when Known.
	Remaining int
	// Known reports that Remaining was announced.
	Known bool
	// Reset is when the limit is whole again (zero: not announced).
	Reset time.Time
}

// Announced reports whether q says anything.
func (q Quota) Announced() bool { return q.Known || q.Limit > 0 || !q.Reset.IsZero() }

// RateLimitReporter is implemented by a Stream whose response headers
// announced rate limits (see RateLimit): the streams of the adapters on
// net/http. RateLimit is nil when the headers said nothing.
type RateLimitReporter interface {
	RateLimit() *RateLimit
}

// MalformedReporter is implemented by a Stream that skips events it cannot
// decode (invalid JSON in one data line of an otherwise healthy stream):
// MalformedEvents counts those skipped so far.
type MalformedReporter interface {
	MalformedEvents() int
}

// Malformed is the events s skipped so far: 0 when s does not say (see
// MalformedReporter).
func Malformed(s Stream) int {
	if mr, ok := s.(MalformedReporter); ok {
		return mr.MalformedEvents()
	}
	return 0
}

// ParseRateLimit reads the rate-limit headers of a response received at now:
// x-ratelimit-{limit,remaining,reset}-{requests,tokens} (reset a Go-style
// duration such as "1s", "6m0s" or "12ms"; Azure's 2023 x-rate-limit-reset-tokens
// in whole seconds) and anthropic-ratelimit-{requests,tokens,input-tokens}-
// {limit,remaining,reset} (reset an RFC 3339 time). It returns nil when h
// announces nothing. It is safe for concurrent use.
func ParseRateLimit(h http.Header, now time.Time) *RateLimit {
	if len(h) == 0 {
		return nil
	}
	var rl RateLimit
	if canonical(h, "Anthropic-Ratelimit-Requests-Limit") != "" || canonical(h, "Anthropic-Ratelimit-Requests-Remaining") != "" ||
		canonical(h, "Anthropic-Ratelimit-Tokens-Remaining") != "" || canonical(h, "Anthropic-Ratelimit-Input-Tokens-Remaining") != "" {
		rl.Requests = anthropicQuota(h, "Anthropic-Ratelimit-Requests-")
		rl.Tokens = anthropicQuota(h, "Anthropic-Ratelimit-Tokens-")
		if !rl.Tokens.Announced() {
			rl.Tokens = anthropicQuota(h, "Anthropic-Ratelimit-Input-Tokens-")
		}
	} else {
		rl.Requests = openaiQuota(h, "Requests")
		rl.Tokens = openaiQuota(h, "Tokens")
		if !rl.Tokens.Announced() {
			// Azure 2023: x-rate-limit-{remaining,reset}-tokens, reset in seconds.
			rl.Tokens = quota(canonical(h, "X-Rate-Limit-Limit-Tokens"), canonical(h, "X-Rate-Limit-Remaining-Tokens"))
			rl.Tokens.Reset = after(now, canonical(h, "X-Rate-Limit-Reset-Tokens"))
		}
		rl.Requests.Reset = orReset(rl.Requests, now, canonical(h, "X-Ratelimit-Reset-Requests"))
		rl.Tokens.Reset = orReset(rl.Tokens, now, canonical(h, "X-Ratelimit-Reset-Tokens"))
	}
	if !rl.Requests.Announced() && !rl.Tokens.Announced() {
		return nil
	}
	out := rl // only an announcement moves to the heap
	return &out
}

// canonical is h.Get of a key given in canonical form (every one above),
// without canonicalising it again on each of the many lookups.
func canonical(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func openaiQuota(h http.Header, kind string) Quota {
	return quota(canonical(h, "X-Ratelimit-Limit-"+kind), canonical(h, "X-Ratelimit-Remaining-"+kind))
}

func anthropicQuota(h http.Header, prefix string) Quota {
	q := quota(canonical(h, prefix+"Limit"), canonical(h, prefix+"Remaining"))
	if t, err := time.Parse(time.RFC3339, strings.TrimSpace(canonical(h, prefix+"Reset"))); err == nil {
		q.Reset = t
	}
	return q
}

// quota reads a limit and a remaining count; a limit of 0 or -1 (Azure's
// Responses API) is unknown.
// An absent header is not parsed: strconv's error for "" allocates, on
// every answer.
func quota(limit, remaining string) Quota {
	var q Quota
	if limit == "" && remaining == "" {
		return q
	}
	if n, err := strconv.Atoi(strings.TrimSpace(limit)); err == nil && n > 0 {
		q.Limit = n
	}
	if n, err := strconv.Atoi(strings.TrimSpace(remaining)); err == nil && n >= 0 {
		q.Remaining, q.Known = n, true
	}
	return q
}

// orReset is q's reset, or now plus the duration v when q has none and
// announces something.
func orReset(q Quota, now time.Time, v string) time.Time {
	if !q.Reset.IsZero() || (!q.Known && q.Limit == 0) {
		return q.Reset
	}
	return after(now, v)
}

// after is now plus the duration v; zero when v is not one (or is 0,
// which Azure sends for unknown).
func after(now time.Time, v string) time.Time {
	if d, ok := classify.ParseDuration(v); ok && d > 0 {
		return now.Add(d)
	}
	return time.Time{}
}
