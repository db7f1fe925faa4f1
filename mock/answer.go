package mock

import "strings"

// answerText derives the mock's deterministic reply from the request:
//   - after a tool result: "Mock answer from MODEL: the tool returned: FIRST WORDS"
//   - when the prompt asks to summarize (contains "summar"): "Summary: FIRST WORDS…"
//     taken from the text after the first colon or line break, if any;
//   - otherwise: "Mock answer from MODEL: FIRST 8 WORDS OF THE PROMPT".
func answerText(c *chat) string {
	var b strings.Builder
	b.Grow(len(c.model) + 96)
	switch {
	case c.toolResult:
		b.WriteString("Mock answer from ")
		b.WriteString(c.model)
		b.WriteString(": the tool returned: ")
		writeWords(&b, c.text, 8)
	case strings.Contains(strings.ToLower(c.text), "summar"):
		src := c.text
		if i := strings.IndexAny(src, ":\n"); i >= 0 && strings.TrimSpace(src[i+1:]) != "" {
			src = src[i+1:]
		}
		b.WriteString("Summary: ")
		if writeWords(&b, src, 12) == 0 {
			b.WriteString("nothing to summarize")
		}
		b.WriteString(".")
	default:
		b.WriteString("Mock answer from ")
		b.WriteString(c.model)
		b.WriteString(": ")
		if writeWords(&b, c.text, 8) == 0 {
			b.WriteString("hello")
		}
	}
	return b.String()
}

// writeWords writes up to n whitespace-separated words of s, joined by
// single spaces, and returns how many it wrote.
func writeWords(b *strings.Builder, s string, n int) int {
	w := 0
	for f := range strings.FieldsSeq(s) {
		if w == n {
			break
		}
		if w > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
		w++
	}
	return w
}

// tokens splits an answer into stream deltas: words, each after the first
// keeping its leading space, so the deltas concatenate to the answer.
func tokens(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i] == ' ' {
			out = append(out, s[start:i])
			start = i
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// countTokens is len(tokens(s)) without building the slice.
func countTokens(s string) int {
	if s == "" {
		return 0
	}
	n := 1
	for i := 1; i < len(s); i++ {
		if s[i] == ' ' {
			n++
		}
	}
	return n
}
