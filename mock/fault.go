package mock

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Fault kinds. A Step names one of these, or an HTTP status code (which is
// rendered as the dialect's error for that status, see the package doc).
const (
	KindOK                = "ok"                 // a normal success (also "200")
	KindOverloaded        = "overloaded"         // Anthropic 529 overloaded_error, OpenAI 503, Gemini 503 UNAVAILABLE
	KindRateLimit         = "rate_limit"         // 429 with retry-after (arg: seconds, default 2)
	KindInsufficientQuota = "insufficient_quota" // OpenAI 429 insufficient_quota; Anthropic 400 low credit; Gemini 429 "limit: 0"
	KindCreditLow         = "credit_low"         // Anthropic 400 "credit balance is too low"; OpenAI insufficient_quota; Gemini 402
	KindDailyQuota        = "daily_quota"        // Gemini 429 PerDay QuotaFailure; Anthropic 429 enforced_spend_limit_reached; OpenAI insufficient_quota
	KindBadKey            = "bad_key"            // Anthropic/OpenAI/Azure 401, Gemini 400 API_KEY_INVALID
	KindPermission        = "permission"         // 403
	KindNotFound          = "not_found"          // 404 model not found (Azure DeploymentNotFound)
	KindInvalidRequest    = "invalid_request"    // 400
	KindContextOverflow   = "context_overflow"   // 400 prompt too long / context_length_exceeded
	KindTooLarge          = "too_large"          // 413
	KindServerError       = "server_error"       // 500
	KindTimeout           = "timeout"            // 504
	KindHTML502           = "html_502"           // Cloudflare HTML 502 page
	KindReset             = "reset"              // connection reset (TCP RST) before any response
	KindHang              = "hang"               // no response until the client gives up (or Server.Close)
	KindSilent            = "silent"             // no response headers for N seconds (default 15), then the connection closes
	KindTruncated         = "truncated"          // a 200 whose body (or stream) stops half way
	KindMidstream         = "midstream"          // a stream that fails after N tokens (arg: N, default 3)
	KindStall             = "stall"              // 200, then keep-alives (N of them, then the answer; no N: until the client gives up)
	KindStuck             = "stuck"              // a stream that goes silent after N tokens (default 3) until the client gives up
	KindLong              = "long"               // a long answer: N seconds of generation (default 40), streamed as it is generated
	KindMalformed         = "malformed"          // a stream with one event of invalid JSON after N deltas (default 2), otherwise whole
)

// kindNames lists every named kind, for validation and messages.
func kindNames() []string {
	return []string{KindOK, KindOverloaded, KindRateLimit, KindInsufficientQuota, KindCreditLow,
		KindDailyQuota, KindBadKey, KindPermission, KindNotFound, KindInvalidRequest, KindContextOverflow,
		KindTooLarge, KindServerError, KindTimeout, KindHTML502, KindReset, KindHang, KindSilent, KindTruncated, KindMidstream, KindStall, KindStuck, KindLong, KindMalformed}
}

// Step is one scripted answer, written KIND[:ARG][@LATENCY]: "529",
// "429:2" (retry-after 2 s), "rate_limit", "midstream:5" (fail after 5
// tokens), "200@300ms" (succeed after 300 ms), "hang". The zero Step is a
// plain success. Step is a value type, safe to copy and share.
type Step struct {
	// Kind is one of the Kind constants; a numeric step sets Status and the
	// kind that status maps to.
	Kind string
	// Status is the HTTP status from a numeric step ("529"), or 0 to use the
	// kind's usual status for the dialect.
	Status int
	// Arg is the optional argument (meaningful when HasArg): retry-after
	// seconds for rate limits and overload, tokens before the failure for
	// midstream and truncated streams.
	Arg int
	// HasArg says Arg was given; without it each kind uses its default.
	HasArg bool
	// Latency is waited before answering.
	Latency time.Duration
}

// String returns the step in the syntax ParseStep reads.
func (s Step) String() string {
	var b strings.Builder
	switch {
	case s.Status != 0:
		b.WriteString(strconv.Itoa(s.Status))
	case s.Kind == "":
		b.WriteString(KindOK)
	default:
		b.WriteString(s.Kind)
	}
	if s.HasArg {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(s.Arg))
	}
	if s.Latency > 0 {
		b.WriteByte('@')
		b.WriteString(s.Latency.String())
	}
	return b.String()
}

// statusKind maps a numeric step to the kind rendered for it.
func statusKind(code int) string {
	switch code {
	case 200:
		return KindOK
	case 400:
		return KindInvalidRequest
	case 401:
		return KindBadKey
	case 402:
		return KindCreditLow
	case 403:
		return KindPermission
	case 404:
		return KindNotFound
	case 413:
		return KindTooLarge
	case 429:
		return KindRateLimit
	case 500:
		return KindServerError
	case 502:
		return KindHTML502
	case 503, 529:
		return KindOverloaded
	case 504:
		return KindTimeout
	}
	if code >= 500 {
		return KindServerError
	}
	return KindInvalidRequest
}

// ParseStep parses one step (see Step).
func ParseStep(s string) (Step, error) {
	var st Step
	s = strings.TrimSpace(s)
	if s == "" {
		return st, fmt.Errorf("empty step")
	}
	if body, lat, ok := strings.Cut(s, "@"); ok {
		d, err := time.ParseDuration(lat)
		if err != nil || d < 0 {
			return st, fmt.Errorf("step %q: bad latency %q (want a duration like 300ms)", s, lat)
		}
		st.Latency = d
		s = body
	}
	kind, arg, hasArg := strings.Cut(s, ":")
	if hasArg {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 {
			return st, fmt.Errorf("step %q: bad argument %q (want a non-negative integer)", s, arg)
		}
		st.Arg, st.HasArg = n, true
	}
	if n, err := strconv.Atoi(kind); err == nil {
		if n < 200 || n > 599 {
			return st, fmt.Errorf("step %q: status %d out of range 200-599", s, n)
		}
		st.Status = n
		st.Kind = statusKind(n)
		if n == 200 {
			st.Status = 0
		}
		return st, nil
	}
	kind = strings.ReplaceAll(strings.ToLower(kind), "-", "_")
	for _, k := range kindNames() {
		if k == kind {
			st.Kind = k
			return st, nil
		}
	}
	return st, fmt.Errorf("unknown fault %q (want a status code or one of %s)", kind, strings.Join(kindNames(), ", "))
}

// ParseSteps parses a comma-separated sequence such as "529,529,200".
func ParseSteps(s string) ([]Step, error) {
	parts := strings.Split(s, ",")
	steps := make([]Step, 0, len(parts))
	for i, p := range parts {
		st, err := ParseStep(p)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
		steps = append(steps, st)
	}
	return steps, nil
}

func (s Step) kind() string {
	if s.Kind == "" {
		return KindOK
	}
	return s.Kind
}

func (s Step) arg(def int) int {
	if !s.HasArg {
		return def
	}
	return s.Arg
}
