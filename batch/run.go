package batch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
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
	lost                     float64 // of answers whose record was not written
	burnt                    float64 // of failed attempts (resilience's Wasted)
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
		if p := r.in.Format.provider(); err != nil && p != "" && !strings.Contains(name, "/") {
			// A bare model in an API's own batch file is that API's model.
			if prt, perr := res(p + "/" + name); perr == nil {
				rt, err = prt, nil
			}
		}
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
	if spent := s.cost + s.burnt; spent+s.held+est > r.cfg.MaxCost {
		return false, fmt.Sprintf("spend ceiling of $%.4f reached: $%.4f spent, $%.4f in flight, the next item about $%.4f",
			r.cfg.MaxCost, spent, s.held, est)
	}
	it.est = est
	s.held += est
	return true, ""
}
