package batch

import (
	"time"

	"github.com/llmguard/llmguard/resilience"
)

// engineEvent warns, once per target, of a target failing for its key
// while the run goes on.
func (r *Runner) engineEvent(ev resilience.Event) {
	v := ev.Verdict
	if ev.Kind != resilience.EventFailure || v == nil || v.Retryable || v.Scope != "key" {
		return
	}
	r.mu.Lock()
	seen := r.warned[ev.Target]
	r.warned[ev.Target] = true
	r.mu.Unlock()
	if !seen {
		r.emit(Event{Kind: EventWarn, Reason: ev.Target + ": " + v.Message})
	}
}

// emit sends ev, with the time and the progress, to Config.OnEvent.
func (r *Runner) emit(ev Event) {
	if r.cfg.OnEvent == nil {
		return
	}
	ev.Time = time.Now()
	ev.Progress = r.Progress()
	r.cfg.OnEvent(ev)
}

// Progress returns a snapshot of the run.
func (r *Runner) Progress() Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &r.st
	p := Progress{Served: s.served, Failed: s.failed, Canceled: s.canceled, InFlight: s.inFlight,
		Paused: s.paused, Reason: s.reason, CostUSD: s.cost}
	if s.paused {
		p.Until = s.until
	}
	if r.in != nil {
		p.Total = r.in.Len()
	}
	p.Skipped = r.skipped
	if !r.start.IsZero() {
		p.Elapsed = time.Since(r.start)
		if secs := p.Elapsed.Seconds(); secs > 0 {
			p.Rate = float64(s.served+s.failed) / secs
		}
	}
	return p
}

func (r *Runner) summary(out string) *Summary {
	p := r.Progress()
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &r.st
	sum := &Summary{Progress: p, Out: out, Format: r.in.Format, FailedByClass: s.byClass,
		Attempts: s.attempts, WastedAttempts: s.wasted, WastedCostUSD: s.lost + s.burnt}
	sum.InFlight, sum.Paused, sum.Reason, sum.Until = 0, false, "", time.Time{}
	if p.Left() > 0 {
		sum.Stopped = s.stopped
		if sum.Stopped == "" {
			sum.Stopped = "ended with items left"
		}
	}
	return sum
}
