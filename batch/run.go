package batch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/llmguard/llmguard/resilience"
)

// state is a run's shared state, under Runner.mu.
type state struct {
	queue    []*item // items to send again, before new ones
	peek     *item   // the input's next item, read and not yet sent
	inFlight int
	drained  bool // every line of the input was read

	served, failed, canceled int
	byClass                  map[string]int
	attempts, wasted         int
	cost                     float64 // of this run's answers
	costN                    int     // answers whose cost is in cost
	held                     float64 // cost estimates of the items in flight

	paused   bool
	until    time.Time // no item before it
	reason   string
	pauses   int  // consecutive pauses without an answer (backoff)
	probing  bool // after a pause: one item at a time until one is answered
	probeOut bool

	stopped string // why no more items are taken
	werr    error  // the results file failed
}

// pending is a record on its way to the results file.
type pending struct {
	rec  *Record
	line []byte
}

// Backoff of a pause whose end nobody knows: 2s, doubling, at most a minute.
const (
	pauseMin = 2 * time.Second
	pauseMax = time.Minute
)

// Run sends every item of in that the results file at out does not
// already hold, and appends each one's record to it, durably (fsync) before
// counting it done. The file is created when missing; its directory must
// exist (ErrNoDir); a second run on it at once fails (ErrBusy). Cancelling
// ctx aborts the items in flight: each is recorded as canceled, to do again.
// The error is for what stops the run from starting or from writing its
// records; how far the run got, and why it stopped early, is in the Summary.
func (r *Runner) Run(ctx context.Context, in *Input, out string) (*Summary, error) {
	r.in, r.start = in, time.Now()
	r.st.byClass = map[string]int{}
	if in.needsCodec && r.cfg.Codec == nil {
		what := in.Format.String() + " lines"
		if in.Format == FormatLLMGuard {
			what = `lines with "messages"`
		}
		return nil, fmt.Errorf("%s: %s need Config.Codec (gateway.Codec{}) to be read", in.Name, what)
	}
	if err := r.resolve(); err != nil {
		return nil, err
	}
	res, err := openResults(out, in.Format, r.cfg.RetryFailed)
	if err != nil {
		return nil, err
	}
	r.out = res
	for i := range in.entries {
		if _, ok := res.done[in.entries[i].key()]; ok {
			r.skipped++
		}
	}
	src, err := in.open()
	if err != nil {
		res.close()
		return nil, err
	}
	defer src.Close()

	r.writes = make(chan *pending, 2*r.cfg.Concurrency+16)
	wrote := make(chan struct{})
	go r.write(wrote)
	r.dispatch(ctx, src)
	r.wg.Wait()
	close(r.writes)
	<-wrote
	cerr := res.close()

	sum := r.summary(out)
	r.mu.Lock()
	werr := r.st.werr
	r.mu.Unlock()
	if werr == nil {
		werr = cerr
	}
	if werr != nil {
		return sum, fmt.Errorf("%s: %w", out, werr)
	}
	return sum, nil
}

// resolve maps Config.Route, or every line's model, to the engine's route.
func (r *Runner) resolve() error {
	res := r.cfg.Resolve
	if res == nil {
		res = func(s string) (string, error) { return s, nil }
	}
	if r.cfg.Route != "" {
		rt, err := res(r.cfg.Route)
		if err != nil {
			return &ResolveError{Input: r.in.Name, Model: r.cfg.Route, Err: err}
		}
		r.route = rt
		return nil
	}
	r.routes = map[string]string{}
	for _, e := range r.in.entries {
		if e.bad != "" {
			continue
		}
		if _, ok := r.routes[e.model]; ok {
			continue
		}
		name := e.model
		if name == "" {
			name = "default"
		}
		rt, err := res(name)
		if err != nil {
			return &ResolveError{Input: r.in.Name, Line: e.line, Model: name, Err: err}
		}
		r.routes[e.model] = rt
	}
	return nil
}

// dispatch sends the items, Concurrency at a time, until every one has a
// record or the run stops; it returns once nothing more will be sent.
func (r *Runner) dispatch(ctx context.Context, src io.Reader) {
	slots := make(chan struct{}, r.cfg.Concurrency)
	next := r.reader(src)
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			r.stop("aborted")
			return
		case <-r.stopCh:
			return
		}
		it := r.take(ctx, next)
		if it == nil {
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.do(ctx, it)
			<-slots
		}()
	}
}

// reader returns the next input item still to do, nil at the end. A
// malformed line is recorded as failed on the way.
func (r *Runner) reader(src io.Reader) func() *item {
	lines := make(chan *item)
	go func() {
		defer close(lines)
		idx := 0
		_ = eachLine(src, func(n int, b []byte, tooLong bool) error {
			if idx >= len(r.in.entries) || r.in.entries[idx].line != n {
				return errors.New("the input changed while it ran")
			}
			e := r.in.entries[idx]
			idx++
			if _, done := r.out.done[e.key()]; done {
				return nil
			}
			it := &item{entry: e, idx: idx - 1}
			if e.bad == "" {
				if err := r.decode(it, bytes.Clone(b)); err != nil {
					it.bad = err.Error()
				}
			}
			select {
			case lines <- it:
				return nil
			case <-r.stopCh:
				return errors.New("stopped")
			}
		})
	}()
	return func() *item {
		select {
		case it := <-lines:
			return it
		case <-r.stopCh:
			return nil
		}
	}
}

// take returns the next item to send once the run may send one (not
// paused, within the spend ceiling), or nil when the run is over. Items
// sent before and put back come first, then the input's next line.
func (r *Runner) take(ctx context.Context, next func() *item) *item {
	for {
		r.mu.Lock()
		s := &r.st
		if s.stopped != "" {
			r.mu.Unlock()
			return nil
		}
		if s.peek == nil && len(s.queue) == 0 && !s.drained {
			r.mu.Unlock()
			it := next()
			switch {
			case it == nil:
				r.mu.Lock()
				s.drained = true
				r.mu.Unlock()
			case it.bad != "":
				r.record(r.malformed(it))
			default:
				r.mu.Lock()
				s.peek = it
				r.mu.Unlock()
			}
			continue
		}
		it, wait, why := r.gateLocked(time.Now())
		if it != nil {
			r.mu.Unlock()
			return it
		}
		if s.peek == nil && len(s.queue) == 0 && s.drained && s.inFlight == 0 {
			r.mu.Unlock()
			return nil // every item has its record
		}
		r.mu.Unlock()
		if why != "" {
			r.stop(why)
			return nil
		}
		select {
		case <-wait:
		case <-r.wake:
		case <-r.stopCh:
		case <-ctx.Done():
			r.stop("aborted")
			return nil
		}
	}
}

// gateLocked returns the next item when one may go now; else when to look
// again (nil: on a change) and, when the spend ceiling ends the run, why.
func (r *Runner) gateLocked(now time.Time) (_ *item, wait <-chan time.Time, stop string) {
	s := &r.st
	switch {
	case now.Before(s.until):
		return nil, time.After(s.until.Sub(now)), ""
	case s.probing && s.probeOut:
		return nil, nil, ""
	}
	it := s.peek
	if len(s.queue) > 0 {
		it = s.queue[0]
	}
	if it == nil {
		return nil, nil, ""
	}
	if ok, why := r.affordLocked(it); !ok {
		return nil, nil, why
	}
	if it == s.peek {
		s.peek = nil
	} else {
		s.queue = s.queue[1:]
	}
	s.inFlight++
	if s.probing {
		s.probeOut, it.probe = true, true
	}
	return it, nil, ""
}

// affordLocked reports whether it may be sent under the spend ceiling, and
// holds its estimate; a refusal with a reason stops the run, one without
// waits for the first answer to tell what an item costs.
func (r *Runner) affordLocked(it *item) (bool, string) {
	if r.cfg.MaxCost <= 0 {
		return true, ""
	}
	s := &r.st
	est := 0.0
	switch {
	case r.cfg.Estimate != nil:
		est = r.cfg.Estimate(it.req)
	case s.costN > 0:
		est = s.cost / float64(s.costN)
	case s.inFlight > 0:
		return false, ""
	}
	if s.cost+s.held+est > r.cfg.MaxCost {
		return false, fmt.Sprintf("spend ceiling of $%.4f reached: $%.4f spent, $%.4f in flight, the next item about $%.4f",
			r.cfg.MaxCost, s.cost, s.held, est)
	}
	it.est = est
	s.held += est
	return true, ""
}

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

// finish hands an item's record to the writer and frees its slot.
func (r *Runner) finish(it *item, rec *Record) {
	r.record(rec)
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

// record encodes rec and queues it for the results file.
func (r *Runner) record(rec *Record) {
	line := rec.encode(nil, r.in.Format, r.cfg.Codec, time.Now())
	rec.res, rec.err = nil, nil
	r.writes <- &pending{rec: rec, line: line}
}

// write appends queued records to the results file, as many at once as
// are waiting, each group made durable by one fsync before its records
// count as done.
func (r *Runner) write(done chan<- struct{}) {
	defer close(done)
	var buf []byte
	group := make([]*pending, 0, 64)
	for p := range r.writes {
		group = append(group[:0], p)
	more:
		for len(group) < 256 {
			select {
			case q, ok := <-r.writes:
				if !ok {
					break more
				}
				group = append(group, q)
			default:
				break more
			}
		}
		buf = buf[:0]
		for _, q := range group {
			buf = append(buf, q.line...)
		}
		r.mu.Lock()
		werr := r.st.werr
		r.mu.Unlock()
		if werr != nil {
			continue // not written: not done
		}
		if err := r.out.append(buf); err != nil {
			r.mu.Lock()
			r.st.werr = err
			r.mu.Unlock()
			r.stop("writing the results failed: " + err.Error())
			continue
		}
		for _, q := range group {
			r.ack(q.rec)
		}
	}
}

// ack counts a record on disk.
func (r *Runner) ack(rec *Record) {
	r.mu.Lock()
	s := &r.st
	switch rec.Status {
	case StatusOK:
		s.served++
	case StatusFailed:
		s.failed++
		s.byClass[rec.Class]++
	case StatusCanceled:
		s.canceled++
	}
	r.mu.Unlock()
	r.emit(Event{Kind: EventItem, Record: rec})
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
		Attempts: s.attempts, WastedAttempts: s.wasted}
	sum.InFlight, sum.Paused, sum.Reason, sum.Until = 0, false, "", time.Time{}
	if p.Left() > 0 {
		sum.Stopped = s.stopped
		if sum.Stopped == "" {
			sum.Stopped = "ended with items left"
		}
	}
	return sum
}
