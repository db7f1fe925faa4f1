package lograte

import (
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/internal/syncbuf"
)

// lines is a goroutine-safe log sink.
type lines struct{ syncbuf.Buffer }

func (l *lines) all() []string {
	return strings.Split(strings.TrimSpace(l.String()), "\n")
}

var repeated = regexp.MustCompile(`repeated=(\d+)`)

// count returns how many lines match and how many records they stand for.
func count(ls []string, substr string) (lines, records int) {
	for _, l := range ls {
		if !strings.Contains(l, substr) {
			continue
		}
		lines++
		if m := repeated.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			records += n
		} else {
			records++
		}
	}
	return lines, records
}

// An outage: a thousand identical failures (each with its own request id)
// over 30 seconds log a line per 10-second interval, and the counts add up.
func TestOutageLogsOncePerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lines
		h := New(slog.NewTextHandler(&out, nil), nil)
		log := slog.New(h).With("component", "gateway")
		for i := range 1000 {
			log.Warn("gateway: call failed", "route", "default", "status", 503,
				"err", fmt.Sprintf("route default: anthropic/claude: 529 overloaded_error: Overloaded (request-id req_011CMock%016d)", i),
				"ms", float64(i)/3)
			log.Info("access", "status", 503) // info passes untouched
			time.Sleep(30 * time.Millisecond)
		}
		h.Flush()
		ls := out.all()
		n, records := count(ls, "call failed")
		t.Logf("1000 failures in 30s: %d warn lines (was 1000)", n)
		if n > 5 || records != 1000 {
			t.Errorf("%d warn lines for %d records, want at most 5 for 1000:\n%s", n, records, strings.Join(ls[:min(8, len(ls))], "\n"))
		}
		if a, _ := count(ls, "msg=access"); a != 1000 {
			t.Errorf("%d access lines, want 1000", a)
		}
	})
}

// Different failures are different kinds; a kind logs again once its
// interval is over; the summary comes when the interval ends.
func TestKindsAndWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lines
		log := slog.New(New(slog.NewTextHandler(&out, nil), &Options{Interval: time.Second}))
		for range 3 {
			log.Warn("call failed", "status", 503)
			log.Warn("call failed", "status", 401)
			log.Error("call failed", "status", 503)
		}
		if got := len(out.all()); got != 3 {
			t.Fatalf("%d lines, want 3 (one per kind):\n%s", got, strings.Join(out.all(), "\n"))
		}
		time.Sleep(1500 * time.Millisecond) // the summaries are due
		ls := out.all()
		if len(ls) != 6 || !strings.Contains(ls[3], "repeated=2") {
			t.Errorf("after the interval:\n%s", strings.Join(ls, "\n"))
		}
		time.Sleep(2 * time.Second)
		log.Warn("call failed", "status", 503)
		if ls := out.all(); len(ls) != 7 || strings.Contains(ls[6], "repeated") {
			t.Errorf("a new window logs at once:\n%s", strings.Join(ls, "\n"))
		}
	})
}

// Kinds a client can multiply (a model name in the line) are bounded: past
// MaxKinds, records are told apart by level and message only.
func TestKindsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lines
		h := New(slog.NewTextHandler(&out, nil), &Options{MaxKinds: 100})
		log := slog.New(h)
		for i := range 5000 {
			log.Warn("call failed", "model", "invented "+letters(i)) // no digits: not folded
		}
		h.Flush()
		n, records := count(out.all(), "call failed")
		if n > 110 || records != 5000 {
			t.Errorf("%d lines for %d records, want at most 110 for 5000", n, records)
		}
		if len(h.st.kinds) > 101 {
			t.Errorf("%d kinds tracked", len(h.st.kinds))
		}
	})
}

func letters(i int) string {
	b := []byte{}
	for ; i > 0 || len(b) == 0; i /= 26 {
		b = append(b, byte('a'+i%26))
	}
	return string(b)
}
