package classify

import (
	"strings"
	"unicode/utf8"
)

// maxMessage is the longest Verdict.Message in bytes (before the ellipsis).
const maxMessage = 200

// Redact masks API keys and bearer tokens in s (sk-..., sk-ant-...,
// AIza..., xai-..., gsk_..., "Bearer <token>"), keeping the prefix so the
// reader can tell which kind of key it was: "sk-ant-***". Already-masked
// forms such as xAI's "xa***yz" pass through. It is safe for concurrent use.
func Redact(s string) string {
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

// mayHoldKey is a quick one-pass filter for Redact: does s contain any
// key prefix at all?
func mayHoldKey(s string) bool {
	for i := 0; i+3 < len(s); i++ {
		switch s[i] {
		case 's':
			if s[i+1] == 'k' && s[i+2] == '-' {
				return true
			}
		case 'A':
			if s[i+1] == 'I' && s[i+2] == 'z' && s[i+3] == 'a' {
				return true
			}
		case 'x':
			if s[i+1] == 'a' && s[i+2] == 'i' && s[i+3] == '-' {
				return true
			}
		case 'g':
			if s[i+1] == 's' && s[i+2] == 'k' && s[i+3] == '_' {
				return true
			}
		case 'B', 'b':
			if strings.HasPrefix(s[i+1:], "earer ") {
				return true
			}
		}
	}
	return false
}

func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// collapse turns every run of whitespace (newlines included) into one
// space and trims the ends.
func collapse(s string) string {
	needs := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' || (c == ' ' && (i == 0 || i+1 == len(s) || s[i+1] == ' ')) {
			needs = true
			break
		}
	}
	if !needs {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// writeTruncated writes s cut to at most n bytes on a rune boundary,
// adding "…" when it cut.
func writeTruncated(b *strings.Builder, s string, n int) {
	if len(s) <= n {
		b.WriteString(s)
		return
	}
	cut := max(n, 1)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	b.WriteString(strings.TrimRight(s[:cut], " "))
	b.WriteString("…")
}

// truncate cuts s to at most n bytes on a rune boundary, adding "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < 1 {
		n = 1
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + "…"
}
