package classify

import (
	"strings"
	"unicode/utf8"
)

// MaxLine is the longest one-line message in bytes, before the "…" that
// marks a cut: Verdict.Message, and every error line the edges show.
const MaxLine = 2048

// maxMessage is the longest Verdict.Message in bytes (before the ellipsis).
const maxMessage = MaxLine

// Line returns s as one line: every run of whitespace (newlines included)
// collapsed to one space, API keys redacted (see Redact), and cut to
// MaxLine bytes on a rune boundary, with "…" when it was longer. It is the
// one shortener for the lines llmguard shows; safe for concurrent use.
func Line(s string) string { return truncate(clean(s), MaxLine) }

// Redact masks API keys and bearer tokens in s (sk-..., sk-ant-...,
// AIza..., xai-..., gsk_..., "Bearer <token>"), keeping the prefix so the
// reader can tell which kind of key it was: "sk-ant-***"; the user info of
// any URL ("http://***@host"); and every value registered with AddSecrets
// ("***"). Already-masked forms such as xAI's "xa***yz" pass through. It is
// safe for concurrent use.
func Redact(s string) string {
	return redactValues(redactUserinfo(redactPrefixes(s)))
}

// redactPrefixes masks the keys Redact recognises by their prefix.
func redactPrefixes(s string) string {
	if !mayHoldKey(s) {
		return s
	}
	// Longer prefixes first.
	keyPrefixes := [...]string{"sk-ant-", "sk-proj-", "sk-or-", "sk-", "AIza", "xai-", "gsk_", "Bearer ", "bearer "}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i := 0; i < len(s); i++ {
		if i > 0 && isKeyChar(s[i-1]) {
			continue
		}
		for _, p := range keyPrefixes {
			if !strings.HasPrefix(s[i:], p) {
				continue
			}
			j := i + len(p)
			for j < len(s) && (isKeyChar(s[j]) || s[j] == '*' || s[j] == '.') {
				j++
			}
			minLen := 8
			if p == "Bearer " || p == "bearer " {
				minLen = 4
			}
			if j-(i+len(p)) < minLen {
				break
			}
			b.WriteString(s[last:i])
			b.WriteString(p)
			b.WriteString("***")
			last = j
			i = j - 1
			break
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// mayHoldKey is a quick filter for Redact: does s contain any key prefix?
func mayHoldKey(s string) bool {
	// Search for rare bytes with the vectorised strings.IndexByte: far
	// cheaper per byte than a byte loop.
	return precededBy(s, '-', "sk") || precededBy(s, '-', "xai") || precededBy(s, '_', "gsk") ||
		strings.Contains(s, "AIza") || strings.Contains(s, "Bearer ") || strings.Contains(s, "bearer ")
}

// needsCollapse reports whether s has newlines, tabs, or leading or
// trailing spaces.
func needsCollapse(s string) bool {
	n := len(s)
	return n > 0 && (s[0] == ' ' || s[n-1] == ' ' || strings.IndexByte(s, '\n') >= 0 ||
		strings.IndexByte(s, '\r') >= 0 || strings.IndexByte(s, '\t') >= 0)
}

// precededBy reports whether some occurrence of c in s directly follows p.
func precededBy(s string, c byte, p string) bool {
	for off := 0; ; {
		i := strings.IndexByte(s[off:], c)
		if i < 0 {
			return false
		}
		i += off
		if i >= len(p) && s[i-len(p):i] == p {
			return true
		}
		off = i + 1
	}
}

// clean collapses whitespace in s and redacts keys.
func clean(s string) string {
	return Redact(collapse(s))
}

func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// collapse turns every run of whitespace (newlines included) into one
// space and trims the ends.
func collapse(s string) string {
	if !needsCollapse(s) {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// writeTruncated writes s cut to at most n bytes on a rune boundary,
// adding "…" when it cut.
func writeTruncated(b *strings.Builder, s string, n int) {
	n = max(n, 1)
	if len(s) <= n {
		b.WriteString(s)
		return
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	b.WriteString(strings.TrimRight(s[:cut], " "))
	b.WriteString("…")
}

// truncate cuts s to at most n bytes on a rune boundary, adding "…".
func truncate(s string, n int) string {
	n = max(n, 1)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + "…"
}
