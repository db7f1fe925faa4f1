package demo

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// The live view draws both ways: in place on a terminal, plain lines otherwise.
func TestRunProgress(t *testing.T) {
	for _, tty := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "tty"}[tty], func(t *testing.T) {
			var buf bytes.Buffer
			s, err := Run(context.Background(), &Options{Requests: 20, Night: time.Second, Progress: &buf, TTY: tty, Interval: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Llmguard.Served + s.Llmguard.Failed; got != 20 {
				t.Errorf("llmguard finished %d requests, want 20", got)
			}
			out := buf.String()
			if tty != strings.Contains(out, "\x1b[2K") {
				t.Errorf("tty=%v but ANSI redraw present=%v", tty, !tty)
			}
			for _, want := range []string{"morning", "20/20"} {
				if !strings.Contains(out, want) {
					t.Errorf("progress lacks %q:\n%s", want, out)
				}
			}
			if tty && !strings.Contains(out, "anthropic/claude-sonnet-4-5") {
				t.Errorf("tty view lacks the targets table:\n%s", out)
			}
		})
	}
}

// The phase is chosen by the time since start, over the night's length.
func TestUpstreamPhase(t *testing.T) {
	w := &upstream{length: 10 * time.Second}
	t0 := time.Unix(1000, 0)
	if got := w.phase(t0); got != 0 {
		t.Errorf("before start: phase %d, want 0", got)
	}
	w.start.Store(t0.UnixNano())
	tests := []struct {
		after time.Duration
		want  int
	}{
		{0, 0}, {1499 * time.Millisecond, 0}, {1500 * time.Millisecond, 1}, {3 * time.Second, 1},
		{4 * time.Second, 2}, {7 * time.Second, 2}, {7500 * time.Millisecond, 3}, {time.Hour, 3},
	}
	for _, tt := range tests {
		if got := w.phase(t0.Add(tt.after)); got != tt.want {
			t.Errorf("phase at +%v = %d (%s), want %d", tt.after, got, night[got].Name, tt.want)
		}
	}
}
