package demo

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/llmguard/llmguard/internal/wait"
	"github.com/llmguard/llmguard/resilience"
)

// eventLog keeps the last few notable engine events (breaker changes) for
// the live view. It is safe for concurrent use.
type eventLog struct {
	mu    sync.Mutex
	max   int
	start time.Time
	lines []string
}

func newEventLog(max int) *eventLog { return &eventLog{max: max} }

func (l *eventLog) note(e resilience.Event) {
	if e.Kind != resilience.EventBreaker {
		return
	}
	what := e.Target
	if e.Reason != "" && strings.HasPrefix(e.Reason, "key ") {
		what += " (" + e.Reason + ")"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	at := ""
	if !l.start.IsZero() {
		at = fmt.Sprintf("+%4.1fs ", time.Since(l.start).Seconds())
	}
	l.lines = append(l.lines, fmt.Sprintf("%sbreaker %s: %s → %s", at, what, e.From, e.To))
	if len(l.lines) > l.max {
		l.lines = l.lines[len(l.lines)-l.max:]
	}
}

func (l *eventLog) recent() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// liveView draws the progress bar and the targets table.
type liveView struct {
	opt              *Options
	n                int
	eng              *resilience.Engine
	lg, naive, plain *tally
	ev               *eventLog
	ups              []*upstream
	began            time.Time
	drawn            int // lines drawn by the last TTY frame
}

// start draws until the returned stop func is called (which draws a last frame).
func (v *liveView) run(start time.Time) (stop func()) {
	v.began = start
	v.ev.mu.Lock()
	v.ev.start = start
	v.ev.mu.Unlock()
	if v.opt.Progress == nil {
		return func() {}
	}
	stopDrawing := wait.Every(context.Background(), v.opt.Interval, func() { v.draw(false) })
	return func() { stopDrawing(); v.draw(true) }
}

func (v *liveView) phaseName() string {
	i := v.ups[0].phase(time.Now())
	return night[i].Name
}

func (v *liveView) draw(final bool) {
	w := v.opt.Progress
	lg := v.lg.snapshot()
	nv, pl := v.naive.snapshot(), v.plain.snapshot()
	done := int(v.lg.done.Load())
	phase := v.phaseName()
	if final {
		phase = "morning"
	}
	if !v.opt.TTY {
		var b strings.Builder
		fmt.Fprintf(&b, "%5.1fs %-16s llmguard %d/%d served %d failed %d attempts %d | naive served %d failed %d | no-retry served %d failed %d |",
			time.Since(v.began).Seconds(), phase, done, v.n, lg.Served, lg.Failed, lg.Attempts, nv.Served, nv.Failed, pl.Served, pl.Failed)
		for _, ts := range v.eng.Status() {
			fmt.Fprintf(&b, " %s %s", short(ts.Target), ts.Breaker)
		}
		b.WriteByte('\n')
		io.WriteString(w, b.String())
		return
	}
	var lines []string
	const width = 40
	fill := 0
	if v.n > 0 {
		fill = done * width / v.n
	}
	lines = append(lines, fmt.Sprintf("night: %-16s  [%s%s] %d/%d", phase, strings.Repeat("█", fill), strings.Repeat("░", width-fill), done, v.n))
	lines = append(lines, fmt.Sprintf("llmguard  served %4d  failed %4d  attempts %5d  retries %4d  fallbacks %4d  waited %5.1fs",
		lg.Served, lg.Failed, lg.Attempts, lg.Retries, lg.Fallbacks, lg.Waited.Seconds()))
	lines = append(lines, "")
	lines = append(lines, fmt.Sprintf("  %-30s %-10s %8s %8s %8s %9s", "target", "breaker", "success", "failure", "retries", "fallbacks"))
	for _, ts := range v.eng.Status() {
		lines = append(lines, fmt.Sprintf("  %-30s %-10s %8d %8d %8d %9d", ts.Target, ts.Breaker, ts.Successes, ts.Failures, ts.Retries, ts.Fallbacks))
	}
	lines = append(lines, "")
	lines = append(lines, fmt.Sprintf("naive     served %4d  failed %4d  attempts %5d", nv.Served, nv.Failed, nv.Attempts))
	lines = append(lines, fmt.Sprintf("no-retry  served %4d  failed %4d  attempts %5d", pl.Served, pl.Failed, pl.Attempts))
	lines = append(lines, "recent:")
	rec := v.ev.recent()
	for i := 0; i < v.ev.max; i++ {
		s := ""
		if i < len(rec) {
			s = "  " + rec[i]
		}
		lines = append(lines, s)
	}
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dF", v.drawn)
	}
	for _, l := range lines {
		b.WriteString("\x1b[2K")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	v.drawn = len(lines)
	io.WriteString(w, b.String())
}

// short is a target's provider name.
func short(target string) string {
	p, _, _ := strings.Cut(target, "/")
	return p
}

// Counts formats counts by name (an Outcome's ServedBy or Failures),
// commonest first, ties by name: "timeout 40, deadline 2".
func Counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
