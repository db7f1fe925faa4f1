package batch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/llmguard/llmguard/resilience"
)

// Backoff of a pause whose end nobody knows: 2s, doubling, at most a minute.
const (
	pauseMin = 2 * time.Second
	pauseMax = time.Minute
)

// do sends one item and records what came of it.
func (r *Runner) do(ctx context.Context, it *item) {
	before := r.answered.Load()
	start := time.Now()
	res, err := r.eng.Chat(ctx, &resilience.Call{Route: r.routeOf(it), Request: it.req, Fallbacks: it.fallbacks, OnEvent: r.engineEvent})
	now := time.Now()
	rec := &Record{ID: it.id, Line: it.line, Latency: now.Sub(start)}
	if err == nil {
		r.answered.Add(1)
		r.served(it, rec, res)
		return
	}
	j := judge(ctx, err, now)
	r.mu.Lock()
	s := &r.st
	s.attempts += j.attempts
	s.wasted += j.attempts
	if re, ok := errors.AsType[*resilience.RouteError](err); ok {
		s.burnt += re.Wasted
	}
	s.held -= it.est
	it.est = 0
	r.mu.Unlock()
	rec.Error, rec.Class, rec.Attempts = j.line, j.class, j.attempts
	if re, ok := errors.AsType[*resilience.RouteError](err); ok && len(re.Attempts) > 0 {
		rec.Target = re.Attempts[len(re.Attempts)-1].Target
	}
	switch j.verdict {
	case itemFault:
		rec.Status, rec.err = StatusFailed, err
		r.finish(it, rec)
	case aborted:
		rec.Status = StatusCanceled
		r.finish(it, rec)
	case accountFault:
		r.back(it)
		r.stop(j.line)
	case quotaReset:
		r.back(it)
		r.pause(j.until, j.line, "every target is out of quota", true)
	case passing:
		if r.answered.Load() > before && !it.probe {
			// Other items were answered meanwhile: the targets work.
			if it.strikes++; it.strikes >= r.cfg.ItemRetries {
				rec.Status, rec.err = StatusFailed, err
				r.finish(it, rec)
				return
			}
			r.back(it)
			return
		}
		r.back(it)
		r.pause(j.until, j.line, pauseWhy(err), !j.until.IsZero())
	}
}

func (r *Runner) routeOf(it *item) string {
	if r.route != "" {
		return r.route
	}
	return r.routes[it.model]
}

// served records an answer, and ends a pause.
func (r *Runner) served(it *item, rec *Record, res *resilience.Result) {
	rec.Status, rec.res = StatusOK, res
	rec.Target, rec.Attempts, rec.Fallbacks, rec.CostUSD = res.Target, res.Attempts, res.Fallbacks, res.Cost
	if resp := res.Response; resp != nil {
		rec.Answer = resp.Text
		rec.InputTokens, rec.OutputTokens = resp.Usage.InputTokens, resp.Usage.OutputTokens
	}
	r.mu.Lock()
	s := &r.st
	s.cost += res.Cost
	s.burnt += res.Wasted
	s.costN++
	s.held -= it.est
	it.est = 0
	s.attempts += res.Attempts
	if res.Attempts > 1 {
		s.wasted += res.Attempts - 1
	}
	resumed := s.probing && !time.Now().Before(s.until)
	if resumed {
		s.paused, s.probing, s.probeOut, s.pauses, s.reason = false, false, false, 0, ""
	}
	r.mu.Unlock()
	if resumed {
		r.emit(Event{Kind: EventResume, Reason: "a target answers again"})
	}
	r.finish(it, rec)
}

// finish hands an item's record to the writer and, once the record is on
// disk (or the file failed), frees its slot: no more items than
// Concurrency are ever answered and not yet durable.
func (r *Runner) finish(it *item, rec *Record) {
	<-r.record(rec)
	r.mu.Lock()
	r.st.inFlight--
	if it.probe {
		r.st.probeOut = false
	}
	r.mu.Unlock()
	r.signal()
}

// back puts an item in flight back in the queue, to send again.
func (r *Runner) back(it *item) {
	r.mu.Lock()
	s := &r.st
	s.queue = append(s.queue, it)
	s.inFlight--
	if it.probe {
		s.probeOut, it.probe = false, false
	}
	r.mu.Unlock()
	r.signal()
}

// malformed is the record of a line that cannot be sent.
func (r *Runner) malformed(it *item) *Record {
	return &Record{ID: it.id, Line: it.line, Status: StatusFailed, Error: it.bad, Class: classMalformed}
}

// pause stops sending until until (a backoff when zero or past), then
// sends one item to see whether the targets are back. known says until
// is the servers' (or the breakers') word, which NoWaitPast weighs.
func (r *Runner) pause(until time.Time, line, why string, known bool) {
	now := time.Now()
	r.mu.Lock()
	s := &r.st
	if s.stopped != "" {
		r.mu.Unlock()
		return
	}
	if limit := r.cfg.NoWaitPast; known && limit > 0 && until.Sub(now) > limit {
		r.mu.Unlock()
		r.stop(fmt.Sprintf("%s: %s until %s (in %s), longer than the %s limit", why, line,
			until.UTC().Format(time.RFC3339), until.Sub(now).Round(time.Second), limit))
		return
	}
	if !until.After(now) {
		until = now.Add(min(pauseMin<<min(s.pauses, 5), pauseMax))
	}
	fresh := !s.paused || s.probing && !now.Before(s.until)
	if fresh {
		s.pauses++
	}
	if until.After(s.until) {
		s.until = until
	}
	s.paused, s.probing, s.reason = true, true, why+": "+line
	ev := Event{Kind: EventPause, Reason: s.reason, Until: s.until}
	r.mu.Unlock()
	if fresh {
		r.emit(ev)
	}
	r.signal()
}

// stop makes the run take no new item, for reason (the first one stands).
func (r *Runner) stop(reason string) {
	r.mu.Lock()
	first := r.st.stopped == ""
	if first {
		r.st.stopped = reason
	}
	r.mu.Unlock()
	if first {
		r.once.Do(func() { close(r.stopCh) })
		r.emit(Event{Kind: EventStop, Reason: reason})
	}
}

// signal wakes the dispatcher.
func (r *Runner) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}
