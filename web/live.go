package web

import (
	"slices"
	"sync"
	"time"

	"github.com/llmguard/llmguard/resilience"
)

// timelineBuckets is the timeline's length in minutes (the last hour).
const timelineBuckets = 60

// latencySamples is how many recent attempt times per target the
// percentiles are taken over.
const latencySamples = 256

// Live keeps what the dashboard shows beyond the engine's Status: each
// target's recent attempt times and the last hour's attempts by class,
// minute by minute. Feed it the engine's events (Event as, or chained into,
// resilience.Options.OnEvent). Safe for concurrent use; it never blocks
// for long. Its memory is bounded: only targets the engine's routes list
// are kept (see NewLive).
type Live struct {
	mu      sync.Mutex
	known   map[string]bool
	lat     map[string]*ring
	start   int64 // the first bucket's minute (Unix minutes)
	buckets map[string]*[timelineBuckets]int
}

// NewLive returns a Live for the targets of routes.
func NewLive(routes map[string][]string) *Live {
	l := &Live{known: map[string]bool{}, lat: map[string]*ring{}, buckets: map[string]*[timelineBuckets]int{}}
	for _, ts := range routes {
		for _, t := range ts {
			l.known[t] = true
		}
	}
	return l
}

type ring struct {
	d []time.Duration
	n int
}

func (r *ring) add(d time.Duration) {
	if len(r.d) < latencySamples {
		r.d = append(r.d, d)
	} else {
		r.d[r.n%latencySamples] = d
	}
	r.n++
}

// Event records an attempt's end.
func (l *Live) Event(ev resilience.Event) {
	if l == nil {
		return
	}
	class := ""
	switch {
	case ev.Kind == resilience.EventSuccess && ev.Attempt > 0:
		class = "ok"
	case ev.Kind == resilience.EventFailure && ev.Verdict != nil && ev.Reason == "":
		class = string(ev.Verdict.Class)
	default:
		return
	}
	t := ev.Time
	if t.IsZero() {
		t = time.Now()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.known[ev.Target] && class == "ok" {
		r := l.lat[ev.Target]
		if r == nil {
			r = &ring{}
			l.lat[ev.Target] = r
		}
		r.add(ev.Elapsed)
	}
	l.shift(t.Unix() / 60)
	b := l.buckets[class]
	if b == nil {
		b = new([timelineBuckets]int)
		l.buckets[class] = b // classes are a closed set: bounded
	}
	b[timelineBuckets-1]++
}

// shift moves the timeline so that its last bucket is minute now. The
// caller holds l.mu.
func (l *Live) shift(now int64) {
	last := l.start + timelineBuckets - 1
	if l.start == 0 {
		l.start = now - timelineBuckets + 1
		return
	}
	if now <= last {
		return
	}
	n := int(min(now-last, timelineBuckets))
	for _, b := range l.buckets {
		copy(b[:], b[n:])
		clear(b[timelineBuckets-n:])
	}
	l.start = now - timelineBuckets + 1
}

// Timeline is the last hour's attempts by class ("ok" for successes),
// one count per minute from Start.
type Timeline struct {
	Start   time.Time        `json:"start"`
	Step    int              `json:"step_seconds"`
	Classes map[string][]int `json:"classes"`
}

func (l *Live) snapshot(now time.Time) (Timeline, map[string][2]float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.shift(now.Unix() / 60)
	tl := Timeline{Start: time.Unix(l.start*60, 0).UTC(), Step: 60, Classes: map[string][]int{}}
	for c, b := range l.buckets {
		tl.Classes[c] = slices.Clone(b[:])
	}
	pct := map[string][2]float64{}
	for t, r := range l.lat {
		s := slices.Clone(r.d)
		slices.Sort(s)
		ms := func(p float64) float64 { return float64(s[int(float64(len(s)-1)*p)]) / float64(time.Millisecond) }
		pct[t] = [2]float64{ms(0.5), ms(0.99)}
	}
	return tl, pct
}
