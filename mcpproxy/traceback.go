package mcpproxy

import (
	"strings"

	"github.com/llmguard/llmguard/classify"
)

// lastMeaningful reduces what an upstream printed (a tool's error text, a
// server's stderr) to the one line that says what went wrong: a Python
// traceback's closing "ValueError: …" line, a Go panic's "panic: …" line,
// a JavaScript error's "TypeError: …" line above its "    at …" frames;
// otherwise the text's last non-empty line that is not a frame, or, for
// text that is no traceback, the whole text on one line. Redacted and
// bounded by classify.Line.
func lastMeaningful(text string) string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var kept []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			kept = append(kept, l)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	if !isTraceback(kept) {
		return classify.Line(classify.Redact(text))
	}
	for _, l := range kept { // Go: the panic line says it
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "panic: ") {
			return classify.Line(classify.Redact(t))
		}
	}
	for i := len(kept) - 1; i >= 0; i-- {
		t := strings.TrimSpace(kept[i])
		if isFrame(kept[i], t) {
			if strings.HasPrefix(t, "at ") && i > 0 {
				// JavaScript: the message stands above the first frame.
				j := i
				for j > 0 && isFrame(kept[j-1], strings.TrimSpace(kept[j-1])) {
					j--
				}
				if j > 0 {
					return classify.Line(classify.Redact(strings.TrimSpace(kept[j-1])))
				}
			}
			continue
		}
		return classify.Line(classify.Redact(t))
	}
	return classify.Line(classify.Redact(strings.TrimSpace(kept[len(kept)-1])))
}

// isTraceback reports whether lines hold a stack trace.
func isTraceback(lines []string) bool {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "Traceback (most recent call last)") || strings.HasPrefix(t, "goroutine ") ||
			strings.HasPrefix(t, "panic: ") || (strings.HasPrefix(t, "at ") && strings.Contains(t, ":")) ||
			strings.HasPrefix(t, `File "`) {
			return true
		}
	}
	return false
}

// isFrame reports whether a line (raw, and trimmed t) is a stack frame or
// a traceback's framing rather than its message.
func isFrame(raw, t string) bool {
	switch {
	case strings.HasPrefix(t, "Traceback (most recent call last)"), strings.HasPrefix(t, `File "`),
		strings.HasPrefix(t, "at "), strings.HasPrefix(t, "goroutine "), strings.HasPrefix(t, "exit status "),
		strings.HasPrefix(t, "^"), strings.HasPrefix(t, "~"), strings.HasPrefix(t, "During handling of"),
		strings.HasPrefix(t, "The above exception"), strings.HasPrefix(t, "created by "):
		return true
	case strings.HasPrefix(raw, "\t"), strings.HasPrefix(raw, "    "):
		// indented: Python source lines under a frame, Go frames
		return true
	}
	return false
}
