package mcpproxy

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"

	"github.com/llmguard/llmguard/classify"
)

// Bounds of what a stdio server's stderr keeps: its last lines, each cut.
const (
	tailLines   = 40
	tailLineMax = 512
)

// stderrTail is a stdio server's stderr: each line goes to the debug log,
// and the last tailLines stay for the reason it stopped. Bounded whatever
// the server writes. Safe for concurrent use.
type stderrTail struct {
	log *slog.Logger

	mu    sync.Mutex
	part  []byte // an unfinished line (bounded by tailLineMax)
	lines []string
}

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.part = appendBounded(t.part, p)
			break
		}
		t.part = appendBounded(t.part, p[:i])
		t.line(string(t.part))
		t.part = t.part[:0]
		p = p[i+1:]
	}
	return n, nil
}

func appendBounded(dst, p []byte) []byte {
	if room := tailLineMax - len(dst); room < len(p) {
		p = p[:max(room, 0)]
	}
	return append(dst, p...)
}

func (t *stderrTail) line(s string) {
	s = strings.TrimRight(s, "\r")
	t.log.Debug("upstream stderr", "line", classify.Redact(s))
	t.lines = append(t.lines, s)
	if len(t.lines) > tailLines {
		t.lines = append(t.lines[:0:0], t.lines[len(t.lines)-tailLines:]...)
	}
}

// take returns the lines kept since the last take (an unfinished line
// too) and forgets them: each start of the server has its own.
func (t *stderrTail) take() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.lines
	if len(t.part) > 0 {
		out = append(out, string(t.part))
	}
	t.lines, t.part = nil, nil
	return out
}
