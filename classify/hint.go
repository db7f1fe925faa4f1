package classify

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxHint bounds any server-supplied delay (one year); larger values are
// treated as garbage.
const maxHint = 366 * 24 * time.Hour

// ParseDuration parses the delay notations providers use: Go durations
// ("6m0s", "20ms", "125h58m35.9s"), protobuf Duration strings ("37s",
// "0.539477544s") and bare seconds ("55", "1.5"). It reports false for
// anything else, for negative values and for values over a year.
// It is safe for concurrent use.
func ParseDuration(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return 0, false
	}
	if d, ok := parseSeconds(s); ok {
		return d, true
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > maxHint {
		return 0, false
	}
	return d, true
}

// parseSeconds parses a plain (possibly fractional) number of seconds.
func parseSeconds(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && c != '.' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > maxHint.Seconds() {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

// parseMillis parses a plain number of milliseconds (retry-after-ms).
func parseMillis(s string) (time.Duration, bool) {
	d, ok := parseSeconds(s)
	if !ok {
		return 0, false
	}
	return d / 1000, true
}

// ParseRetryAfter parses a Retry-After value: delay seconds (integer or
// float) or an HTTP-date, which is taken relative to now. A date in the
// past yields 0, true. It is safe for concurrent use.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if d, ok := parseSeconds(v); ok {
		return d, true
	}
	if len(v) < 20 || len(v) > 64 {
		return 0, false
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d < 0 {
		d = 0
	}
	if d > maxHint {
		return 0, false
	}
	return d, true
}

// headerHints is what the response headers say about waiting.
type headerHints struct {
	wait        time.Duration
	shouldRetry int8 // -1 false, 0 absent, 1 true
}

// readHeaderHints reads every wait hint in the headers and keeps the
// largest: retry-after-ms, retry-after, x-ratelimit-reset-* for an exhausted
// OpenAI-style limit, Azure's x-rate-limit-reset-tokens, and
// anthropic-ratelimit-*-reset for an exhausted Anthropic limit.
func readHeaderHints(x *hdr, now time.Time) headerHints {
	var hh headerHints
	take := func(d time.Duration, ok bool) {
		if ok && d > hh.wait {
			hh.wait = d
		}
	}
	v := &x.v
	if v[hRetryAfterMs] != "" {
		take(parseMillis(v[hRetryAfterMs]))
	}
	if v[hRetryAfter] != "" {
		take(ParseRetryAfter(v[hRetryAfter], now))
	}
	if v[hResetReq] != "" && v[hRemainReq] == "0" {
		take(ParseDuration(v[hResetReq]))
	}
	if v[hResetTok] != "" && v[hRemainTok] == "0" {
		take(ParseDuration(v[hResetTok]))
	}
	// Azure 2023: x-rate-limit-reset-tokens: 55 (seconds); 0/-1 = unknown.
	if v[hAzureResetTok] != "" && (v[hAzureRemainTok] == "" || v[hAzureRemainTok] == "0") {
		take(ParseDuration(v[hAzureResetTok]))
	}
	for _, lim := range [...][2]int{{hAnReqReset, hAnReqRemain}, {hAnTokReset, hAnTokRemain},
		{hAnInReset, hAnInRemain}, {hAnOutReset, hAnOutRemain}} {
		reset := v[lim[0]]
		if reset == "" || v[lim[1]] != "0" {
			continue
		}
		if t, err := time.Parse(time.RFC3339, reset); err == nil {
			if d := t.Sub(now); d > 0 && d <= maxHint {
				take(d, true)
			}
		}
	}
	switch s := strings.TrimSpace(v[hShouldRetry]); {
	case strings.EqualFold(s, "true"):
		hh.shouldRetry = 1
	case strings.EqualFold(s, "false"):
		hh.shouldRetry = -1
	}
	return hh
}

// leadingDuration parses the delay at the start of s: "1.2s", "6m0s",
// "20ms", "60 seconds", "1 second", "2 minutes".
func leadingDuration(s string) (time.Duration, bool) {
	i := 0
	for i < len(s) && i < 32 {
		c := s[i]
		if (c >= '0' && c <= '9') || c == '.' || (c >= 'a' && c <= 'z') {
			i++
			continue
		}
		break
	}
	tok := strings.TrimRight(s[:i], ".")
	if tok == "" || tok[0] < '0' || tok[0] > '9' {
		return 0, false
	}
	if d, ok := parseSeconds(tok); ok {
		rest := strings.TrimLeft(s[i:], " ")
		switch {
		case hasPrefixFold(rest, "second"), hasPrefixFold(rest, "sec"):
			return d, true
		case hasPrefixFold(rest, "minute"), hasPrefixFold(rest, "min"):
			return d * 60, true
		case hasPrefixFold(rest, "hour"):
			return d * 3600, true
		case hasPrefixFold(rest, "ms"), hasPrefixFold(rest, "millisecond"):
			return d / 1000, true
		}
		return 0, false
	}
	d, err := time.ParseDuration(tok)
	if err != nil || d < 0 || d > maxHint {
		return 0, false
	}
	return d, true
}

// indexFold is strings.Index ignoring ASCII case in s; sub must be lower case.
func indexFold(s, sub string) int {
	n := len(sub)
	if n == 0 {
		return 0
	}
	for i := 0; i+n <= len(s); i++ {
		if lower(s[i]) != sub[0] {
			continue
		}
		if hasPrefixFold(s[i:], sub) {
			return i
		}
	}
	return -1
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case; p must be lower case.
func hasPrefixFold(s, p string) bool {
	if len(s) < len(p) {
		return false
	}
	for j := 0; j < len(p); j++ {
		if lower(s[j]) != p[j] {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// nextPacificMidnight is the next 00:00 in America/Los_Angeles after now,
// when Google resets daily quotas. US DST rules are applied directly so the
// result does not depend on the host's tz database.
func nextPacificMidnight(now time.Time) time.Time {
	off := pacificOffset(now)
	local := now.UTC().Add(off)
	y, m, d := local.Date()
	mid := time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
	u := mid.Add(-off)
	return mid.Add(-pacificOffset(u))
}

// pacificOffset is the UTC offset of US Pacific time at t.
func pacificOffset(t time.Time) time.Duration {
	t = t.UTC()
	y := t.Year()
	start := nthSunday(y, time.March, 2).Add(10 * time.Hour) // 02:00 PST
	end := nthSunday(y, time.November, 1).Add(9 * time.Hour) // 02:00 PDT
	if !t.Before(start) && t.Before(end) {
		return -7 * time.Hour
	}
	return -8 * time.Hour
}

func nthSunday(y int, m time.Month, n int) time.Time {
	t := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	for t.Weekday() != time.Sunday {
		t = t.AddDate(0, 0, 1)
	}
	return t.AddDate(0, 0, 7*(n-1))
}

// firstOfNextMonth is 00:00 UTC on the first day of the month after now,
// when Anthropic's monthly spend limits reset.
func firstOfNextMonth(now time.Time) time.Time {
	y, m, _ := now.UTC().Date()
	return time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC)
}
