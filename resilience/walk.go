package resilience

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/wait"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state"
)

// callState is one call's walk over its route. Fields written by hedged
// attempts (attempts, total, retryAt) are guarded by mu.
type callState struct {
	e        *Engine
	rp       *routePlan
	c        *Call
	timeout  time.Duration
	deadline time.Time

	mu        sync.Mutex
	attempts  []AttemptError
	skipped   []Skip
	total     int
	fallbacks int
	waited    time.Duration
	retryAt   time.Time
	// holdAt is the earliest moment a target that turned this pass away
	// (its breaker open or half-open, a rate-limit cooldown) takes calls
	// again, when that is within the target's max_wait; zero when none.
	holdAt  time.Time
	lastErr error // the RouteError once the walk failed
	// hedgedTo holds the targets a hedge has tried; the walker does not
	// try them again. Only the walker's goroutine uses it.
	hedgedTo map[*targetPlan]bool

	// emb is set for an embeddings call (Engine.Embed): Call.Request is nil.
	emb *embedState
}

// newCallState starts a call's walk. Its deadline is the call's timeout (or
// the route's), shortened to ctx's deadline when that comes first, so that a
// wait that would outlive the caller moves on instead of sleeping.
func (e *Engine) newCallState(ctx context.Context, rp *routePlan, c *Call) *callState {
	timeout := rp.timeout
	if c.Timeout > 0 {
		timeout = c.Timeout
	}
	if dl, ok := ctx.Deadline(); ok {
		if until := time.Until(dl); until < timeout {
			timeout = max(until, 0)
		}
	}
	return &callState{e: e, rp: rp, c: c, timeout: timeout, deadline: time.Now().Add(timeout)}
}

func (cs *callState) emit(ev Event) {
	if cs.e.onEvent == nil && cs.c.OnEvent == nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	ev.Route = cs.rp.name
	if cs.e.onEvent != nil {
		cs.e.onEvent(ev)
	}
	if cs.c.OnEvent != nil {
		cs.c.OnEvent(ev)
	}
}

func (cs *callState) left() time.Duration { return cs.deadline.Sub(time.Now()) }

// over reports that the call is out of time: the caller's context ended or
// the deadline passed (which an attempt cut short by the time left shows).
func (cs *callState) over(ctx context.Context) bool {
	return ctx.Err() != nil || cs.left() <= 0
}

func (cs *callState) noteRetryAt(t time.Time) {
	if t.IsZero() {
		return
	}
	cs.mu.Lock()
	if cs.retryAt.IsZero() || t.Before(cs.retryAt) {
		cs.retryAt = t
	}
	cs.mu.Unlock()
}

func (cs *callState) skip(t *targetPlan, reason string) {
	cs.refused(t, refusal{reason: reason})
}

// refusal is why admission turned a target away: reason (empty when it
// admitted), until when the refusal lasts (zero when unknown), whether it
// is a rate-limit cooldown, and whether the call may wait for it (hold: the
// target's own breaker or a cooldown, never a key's breaker on a bad key or
// an empty balance).
type refusal struct {
	reason      string
	until       time.Time
	rateLimited bool
	hold        bool
	// fault is the key fault the refusing breaker holds (see keyFault),
	// first seen at since; ineligible marks a fallback the rules forbid.
	fault      *provider.Error
	since      time.Time
	ineligible bool
}

// refused records a target the call did not try; a refusal that ends at a
// known time counts towards the call's RetryAt, and one the call may wait
// for within the target's max_wait towards its holdAt.
// A key fault's breaker ends only when the key is tried again: that
// counts only when the provider said when the fault ends (a quota reset).
func (cs *callState) refused(t *targetPlan, r refusal) {
	if r.fault == nil || !r.fault.Verdict.Until.IsZero() {
		cs.noteRetryAt(r.until)
	}
	cs.mu.Lock()
	cs.skipped = append(cs.skipped, Skip{Target: t.name, Reason: r.reason, Until: r.until, RateLimited: r.rateLimited,
		Fault: r.fault, Since: r.since, Ineligible: r.ineligible})
	if r.hold && !r.until.IsZero() && r.until.Sub(time.Now()) <= t.retry.maxWait &&
		(cs.holdAt.IsZero() || r.until.Before(cs.holdAt)) {
		cs.holdAt = r.until
	}
	cs.mu.Unlock()
	cs.emit(Event{Kind: EventSkip, Target: t.name, Reason: r.reason})
}

// outcome is a successful attempt: a response, or a stream whose first token arrived.
type outcome struct {
	resp   *provider.Response
	stream *engineStream
	emb    *provider.EmbedResponse
}

// ticket records what admission granted, for the outcome report: whether
// the call is a half-open probe of the key's or the target's breaker, and
// the generation of the half-open state it probes (a report from an older
// state is not a probe's).
type ticket struct {
	keyProbe, targetProbe bool
	keyGen, targetGen     uint64
}

// fallbackOK says whether, after failure pe on from, the call may move to to.
// stop means no later target can be eligible either.
func (cs *callState) fallbackOK(pe *provider.Error, from, to *targetPlan) (ok, stop bool, reason string) {
	v := &pe.Verdict
	switch v.Class {
	case classify.InvalidRequest:
		return false, true, "invalid_request never falls back"
	case classify.ContextLengthExceeded:
		if to.contextSize == 0 {
			return false, false, "context window unknown"
		}
		if from.contextSize != 0 && to.contextSize <= from.contextSize {
			return false, false, fmt.Sprintf("context window %d not larger than %d", to.contextSize, from.contextSize)
		}
		return true, false, ""
	case classify.ContentFiltered:
		if !cs.rp.fallbackOnFilter {
			return false, true, "content_filtered: route does not fall back"
		}
		return true, false, ""
	}
	if pe.AfterFirstToken {
		return false, true, "stream failed after its first token"
	}
	if !v.Fallback {
		return false, true, string(v.Class) + " does not fall back"
	}
	return true, false, ""
}

// fail builds the call's RouteError.
func (cs *callState) fail(sentinel error) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if sentinel == ErrExhausted && len(cs.attempts) == 0 {
		sentinel = ErrNoTarget
	}
	err := &RouteError{Route: cs.rp.name, Err: sentinel, Attempts: cs.attempts, Skipped: cs.skipped, RetryAt: cs.retryAt,
		ClientWait: cs.rp.clientWait}
	cs.lastErr = err
	cs.emit(Event{Kind: EventGiveUp, Err: err})
	return err
}

// walk runs the route: attempts, retries, fallbacks. For streams ctx is the
// caller's (the deadline is enforced by per-attempt timers, so the returned
// stream can outlive it); for Chat it carries the deadline.
//
// When a pass over the targets ends with every target spent and one of them
// turned the call away until a known moment (its breaker open, half-open
// with its probes out, a rate-limit cooldown) that fits the call's time left
// and the target's max_wait, the call waits for it and walks again: an
// outage shorter than the deadline costs the caller time, not the answer.
func (cs *callState) walk(ctx context.Context, stream bool) (outcome, *targetPlan, error) {
	for pass := 0; ; pass++ {
		if pass > 0 {
			cs.mu.Lock()
			cs.skipped, cs.retryAt = nil, time.Time{} // the earlier pass's, out of date
			cs.mu.Unlock()
			cs.hedgedTo = nil
		}
		out, winner, err := cs.pass(ctx, stream)
		if err == nil {
			return out, winner, nil
		}
		if err == ErrExhausted {
			if held, herr := cs.hold(ctx); herr != nil {
				err = herr
			} else if held {
				continue
			}
		}
		return outcome{}, nil, cs.fail(err)
	}
}

// holdSpread spreads the wake-ups of calls held until the same moment.
const holdSpread = 500 * time.Millisecond

// hold waits until the pass's holdAt when it fits the time left (and the
// call's max_total_attempts leaves an attempt), reporting whether it did.
// err is ErrDeadline when the caller went away while waiting.
func (cs *callState) hold(ctx context.Context) (bool, error) {
	cs.mu.Lock()
	at, total := cs.holdAt, cs.total
	cs.holdAt = time.Time{}
	cs.mu.Unlock()
	if at.IsZero() || total >= cs.rp.maxTotal || cs.over(ctx) {
		return false, nil
	}
	// Calls held for the same moment wake spread over holdSpread, so a
	// recovering target is not met by all of them at once.
	d := max(at.Sub(time.Now()), time.Millisecond)
	if spread := d + cs.e.randDuration(holdSpread); spread < cs.left() {
		d = spread
	} else if d >= cs.left() {
		return false, nil
	}
	if err := wait.For(ctx, d); err != nil {
		return false, ErrDeadline
	}
	cs.mu.Lock()
	cs.waited += d
	cs.mu.Unlock()
	return true, nil
}

// pass walks the route's targets once. It returns the winning outcome and
// target, or the sentinel the call would fail with.
func (cs *callState) pass(ctx context.Context, stream bool) (outcome, *targetPlan, error) {
	rp := cs.rp
	if cs.unservable() {
		return outcome{}, nil, cs.fail(ErrUnservable)
	}
	var last *provider.Error
	var lastT *targetPlan
	for i := 0; i < len(rp.targets); i++ {
		t := rp.targets[i]
		if cs.hedgedTo[t] {
			continue // a hedge tried it: its failure is recorded already
		}
		if why := cs.cannotServe(t); why != "" {
			cs.skip(t, why)
			continue
		}
		if last != nil {
			ok, stop, why := cs.fallbackOK(last, lastT, t)
			if !ok {
				cs.refused(t, refusal{reason: why, ineligible: true})
				if stop {
					return outcome{}, nil, ErrRejected
				}
				continue
			}
		}
		out, winner, pe, done := cs.onTarget(ctx, stream, i, last, lastT)
		if pe == nil && winner != nil {
			return out, winner, nil
		}
		if pe != nil {
			last, lastT = pe, t
		}
		if done != nil {
			return outcome{}, nil, done
		}
	}
	if cs.over(ctx) {
		return outcome{}, nil, ErrDeadline
	}
	if last != nil {
		// The last failure may forbid any other target (invalid_request,
		// content_filtered without opt-in, no fallback): say so even when
		// no target was left to refuse.
		if _, stop, _ := cs.fallbackOK(last, lastT, lastT); stop {
			return outcome{}, nil, ErrRejected
		}
	}
	return outcome{}, nil, ErrExhausted
}

// onTarget runs the attempts on target i. prev is the failure on prevT that
// the call falls back from (nil for the first target tried). It returns the
// winning outcome and target, or the last failure on this target (nil when
// it was skipped), and done != nil when the whole call must stop with that
// sentinel.
func (cs *callState) onTarget(ctx context.Context, stream bool, i int, prev *provider.Error, prevT *targetPlan) (out outcome, winner *targetPlan, last *provider.Error, done error) {
	rp, e := cs.rp, cs.e
	t := rp.targets[i]
	t.rt.active.Add(1)
	holdsRetry := false // a retry-budget slot, held for the retry attempt
	defer func() {
		if holdsRetry {
			t.rt.retrying.Add(-1)
		}
		t.rt.active.Add(-1)
	}()
	for n := 1; ; n++ {
		now := time.Now()
		left := cs.deadline.Sub(now)
		if ctx.Err() != nil || left <= 0 {
			return outcome{}, nil, last, ErrDeadline
		}
		cs.mu.Lock()
		full := cs.total >= rp.maxTotal
		cs.mu.Unlock()
		if full {
			cs.skip(t, skipMaxTotal)
			return outcome{}, nil, last, ErrExhausted
		}
		tk, no := e.admit(ctx, cs, t, now)
		if no.reason != "" {
			cs.refused(t, no)
			return outcome{}, nil, last, nil
		}
		if n == 1 && prev != nil {
			cs.mu.Lock()
			cs.fallbacks++
			cs.mu.Unlock()
			t.rt.fallbacks.Add(1)
			cs.emit(Event{Kind: EventFallback, Target: t.name, From: prevT.name, Verdict: verdictOf(prev)})
		}
		var pe *provider.Error
		var skipReason string
		if n == 1 && rp.hedgeAfter > 0 && i+1 < len(rp.targets) {
			out, winner, pe, skipReason = cs.hedged(ctx, stream, i, tk, prev, prevT)
		} else {
			out, pe, skipReason = cs.attempt(ctx, stream, t, tk, n, left)
			winner = t
		}
		if holdsRetry {
			holdsRetry = false
			t.rt.retrying.Add(-1)
		}
		if skipReason != "" {
			cs.skip(t, skipReason)
			return outcome{}, nil, last, nil
		}
		if pe == nil {
			return out, winner, nil, nil
		}
		last = pe
		if cs.over(ctx) {
			return outcome{}, nil, last, ErrDeadline
		}
		v := &pe.Verdict
		// Decide whether to retry on this target.
		if !v.Retryable || v.Class == classify.Timeout || pe.AfterFirstToken {
			cs.noteRetryAt(retryAtOf(time.Now(), v))
			return outcome{}, nil, last, nil
		}
		if n >= t.retry.maxAttempts {
			cs.noteRetryAt(retryAtOf(time.Now(), v))
			return outcome{}, nil, last, nil
		}
		if v.Wait > t.retry.maxWait {
			cs.noteRetryAt(retryAtOf(time.Now(), v))
			cs.skip(t, fmt.Sprintf("server asked to wait %s, more than max_wait %s", v.Wait, t.retry.maxWait))
			return outcome{}, nil, last, nil
		}
		if !retryRoom(t) {
			cs.noteRetryAt(retryAtOf(time.Now(), v))
			cs.skip(t, "retry budget exhausted")
			return outcome{}, nil, last, nil
		}
		d := e.jitter(n, t.retry, v.Wait)
		if d >= cs.left() {
			cs.noteRetryAt(retryAtOf(time.Now(), v))
			cs.skip(t, fmt.Sprintf("wait %s does not fit the time left", d.Round(time.Millisecond)))
			return outcome{}, nil, last, nil
		}
		t.rt.retries.Add(1)
		cs.emit(Event{Kind: EventRetry, Target: t.name, Attempt: n + 1, MaxAttempts: t.retry.maxAttempts, Verdict: v, Wait: d})
		if err := wait.For(ctx, d); err != nil {
			return outcome{}, nil, last, ErrDeadline
		}
		cs.mu.Lock()
		cs.waited += d
		cs.mu.Unlock()
		// The budget was asked when the attempt failed; the slot is taken
		// for the retry itself, since a call waiting out its backoff puts
		// no load on the upstream.
		t.rt.retrying.Add(1)
		holdsRetry = true
	}
}

func verdictOf(pe *provider.Error) *classify.Verdict {
	if pe == nil {
		return nil
	}
	v := pe.Verdict
	return &v
}

// retryAtOf is when the server said to come back: a quota reset, or now+Wait.
func retryAtOf(now time.Time, v *classify.Verdict) time.Time {
	if !v.Until.IsZero() {
		return v.Until
	}
	if v.Wait > 0 {
		return now.Add(v.Wait)
	}
	return time.Time{}
}

// retryAllowed is how many retry attempts may be in flight on t at once:
// max(min_retry_concurrency, budget × calls active on t). A call waiting out
// its backoff holds no slot: it puts no load on the upstream.
func retryAllowed(t *targetPlan) int64 {
	return max(int64(t.retry.budget*float64(t.rt.active.Load())), int64(t.retry.minConcurrency))
}

// retryRoom reports whether t's retry budget has a free slot now. It is
// asked when an attempt fails; the retry takes its slot after the backoff
// (retrying.Add(1)) and gives it back when the attempt ends.
func retryRoom(t *targetPlan) bool { return t.rt.retrying.Load() < retryAllowed(t) }

// attempt makes one upstream attempt on t: concurrency slot, timeouts, the
// adapter call, breaker and statistics. skip != "" means no attempt was made
// (the admission ticket has been returned).
// left is the time left before the call's deadline when the attempt starts.
func (cs *callState) attempt(ctx context.Context, stream bool, t *targetPlan, tk ticket, n int, left time.Duration) (out outcome, pe *provider.Error, skip string) {
	e, rp := cs.e, cs.rp
	release := func() {}
	if t.rt.sem != nil && !t.rt.sem.TryAcquire(1) {
		// No free slot (or callers queued before this one): wait in line.
		wait := min(rp.queueTimeout, left)
		qctx, cancel := context.WithTimeout(ctx, wait)
		err := t.rt.sem.Acquire(qctx, 1)
		cancel()
		if err != nil {
			e.release(t, tk)
			return outcome{}, nil, "concurrency limit: no slot within " + wait.Round(time.Millisecond).String()
		}
		left = cs.left()
	}
	if t.rt.sem != nil {
		release = func() { t.rt.sem.Release(1) }
	}
	cs.mu.Lock()
	cs.total++
	cs.mu.Unlock()
	cs.emit(Event{Kind: EventAttempt, Target: t.name, Attempt: n, MaxAttempts: t.retry.maxAttempts})
	req := cs.c.Request
	if req != nil && (req.Model != t.model || req.Stream != stream) {
		cp := *req
		cp.Model = t.model
		cp.Stream = stream
		req = &cp
	}
	var cut bool
	switch {
	case cs.emb != nil:
		out, pe, cut = cs.embedAttempt(ctx, t, left)
		release()
	case stream:
		out, pe, cut = cs.streamAttempt(ctx, t, req, release, left)
	default:
		out, pe, cut = cs.chatAttempt(ctx, t, req, n, left)
		release()
	}
	if pe != nil && context.Cause(ctx) == errHedgeCancelled {
		// A hedge branch the call cancelled: not the target's failure.
		e.release(t, tk)
		return outcome{}, pe, ""
	}
	if pe == nil {
		e.succeeded(cs, t, tk)
		cs.emit(Event{Kind: EventSuccess, Target: t.name, Attempt: n, MaxAttempts: t.retry.maxAttempts})
		return out, nil, ""
	}
	cs.mu.Lock()
	cs.attempts = append(cs.attempts, AttemptError{Target: t.name, Err: pe})
	cs.mu.Unlock()
	v := pe.Verdict
	cs.emit(Event{Kind: EventFailure, Target: t.name, Attempt: n, MaxAttempts: t.retry.maxAttempts, Verdict: &v, Err: pe})
	if cut || ctx.Err() != nil {
		// The caller went away, or its deadline or the call's remaining
		// time ended the attempt before the full per-attempt timeout: that
		// says nothing about the target. The call ends with ErrDeadline.
		e.release(t, tk)
		return outcome{}, pe, ""
	}
	e.failed(cs, t, tk, pe, "")
	return outcome{}, pe, ""
}

// Attempt timeout causes.
var (
	errHeaderTimeout     = errors.New("header timeout")
	errFirstTokenTimeout = errors.New("first-token timeout")
	errIdleTimeout       = errors.New("idle timeout")
)

// attemptError is the failure of an attempt whose context actx (a child of
// ctx) was given the per-attempt limit: min(full, the time left). When the
// timer (cause) fired after the full timeout, a timeout verdict. When the
// caller's context or the time left ended the attempt earlier, cut is set:
// the adapter's error when the caller's deadline was due, else a timeout
// verdict naming the call's deadline.
func (cs *callState) attemptError(ctx, actx context.Context, t *targetPlan, err, cause error, limit, full time.Duration, what string) (*provider.Error, bool) {
	if ctx.Err() != nil {
		return asProviderError(t, err), true
	}
	if context.Cause(actx) != cause {
		return asProviderError(t, err), false
	}
	what += " " + limit.Round(time.Millisecond).String()
	if limit >= full {
		return timeoutError(t, what, false), false
	}
	if dl, ok := ctx.Deadline(); ok && !dl.After(time.Now()) {
		// The caller's deadline is due too (its timer and ours race).
		return asProviderError(t, err), true
	}
	return timeoutError(t, what+", the call's deadline", false), true
}

// streamAttempt makes a streaming attempt up to its first token: the
// header timeout, then the first-token timeout, each shortened to the time
// left. cut is as for chatAttempt.
func (cs *callState) streamAttempt(ctx context.Context, t *targetPlan, req *provider.Request, release func(), left time.Duration) (_ outcome, _ *provider.Error, cut bool) {
	actx, cancel := context.WithCancelCause(ctx)
	limit := min(cs.rp.headerTimeout, left)
	timer := time.AfterFunc(limit, func() { cancel(errHeaderTimeout) })
	s, err := t.adapter.Stream(actx, req)
	timer.Stop()
	fail := func(err error, cause error, full time.Duration, what string) (outcome, *provider.Error, bool) {
		pe, cut := cs.attemptError(ctx, actx, t, err, cause, limit, full, what)
		cancel(context.Canceled)
		release()
		return outcome{}, pe, cut
	}
	if err != nil || s == nil {
		if err == nil {
			err = errors.New("adapter returned no stream and no error")
		}
		return fail(err, errHeaderTimeout, cs.rp.headerTimeout, "no response headers within")
	}
	limit = min(cs.rp.firstTokenTimeout, cs.left())
	timer = time.AfterFunc(limit, func() { cancel(errFirstTokenTimeout) })
	// The first token is the first chunk with content. Chunks before it
	// carry only metadata (Anthropic's message_start, OpenAI's role-only
	// delta): a failure or a stall after them has sent no token, so they
	// are kept for replay and the wait goes on under the same timer.
	var meta []provider.Chunk
	first, err := s.Recv()
	for err == nil && !hasContent(&first) && len(meta) < maxMetaChunks {
		meta = append(meta, first)
		first, err = s.Recv()
	}
	timer.Stop()
	if err != nil && err != io.EOF {
		s.Close()
		return fail(err, errFirstTokenTimeout, cs.rp.firstTokenTimeout, "no first token within")
	}
	es := &engineStream{
		s: s, actx: actx, cancel: cancel, release: release, idle: cs.rp.idleTimeout,
		e: cs.e, t: t, route: cs.rp.name, meta: meta, first: first, hasFirst: err == nil, eof: err == io.EOF,
	}
	return outcome{stream: es}, nil, false
}

// maxMetaChunks bounds the content-less chunks a stream may send before its
// first token; beyond it the stream counts as started.
const maxMetaChunks = 64

// hasContent reports whether c is a token: text, a tool call delta,
// thinking or a finish reason (not only metadata such as Model, ID, Usage).
func hasContent(c *provider.Chunk) bool {
	return c.Text != "" || c.ToolCall != nil || c.Thinking != nil || c.FinishReason != ""
}

// admit asks both breakers (the provider key's, then the target's) whether
// a call may go to t. A refusal with a reason means no; it says until when
// the breaker refuses (an open breaker's OpenUntil, a probe recheck, a
// cooldown's next paced call) when that is known.
func (e *Engine) admit(ctx context.Context, cs *callState, t *targetPlan, now time.Time) (ticket, refusal) {
	var tk ticket
	ok, probe, kb, no := e.ask(ctx, cs, t, t.keyKey, t.keyLabel, now)
	if !ok {
		if no.reason != "" && !strings.HasPrefix(no.reason, "state store: ") {
			no.reason = "key " + t.provider + ": " + no.reason
			if !no.rateLimited {
				no.fault, no.since = faultError(t, kb.Fault)
			}
		}
		// A key's breaker opens on a bad key or an empty balance: not
		// worth waiting for. Its rate-limit cooldown is.
		no.hold = no.rateLimited
		return tk, no
	}
	tk.keyProbe, tk.keyGen = probe, kb.Generation
	ok, probe, tb, no := e.ask(ctx, cs, t, t.breakerKey, "", now)
	if !ok {
		e.release(t, tk)
		no.hold = !strings.HasPrefix(no.reason, "state store: ")
		return ticket{}, no
	}
	tk.targetProbe, tk.targetGen = probe, tb.Generation
	return tk, refusal{}
}

// ask asks the breaker at key whether a call may start at now, and returns
// its record as the answer left it. A quiet record (closed, no cooldown)
// admits without a write.
func (e *Engine) ask(ctx context.Context, cs *callState, t *targetPlan, key, label string, now time.Time) (ok, probe bool, after state.Breaker, no refusal) {
	b, err := e.store.Breaker(ctx, key)
	if err != nil {
		return false, false, b, refusal{reason: "state store: " + err.Error()}
	}
	if breakerQuiet(&b, now) {
		return true, false, b, refusal{}
	}
	from := breakerState(&b)
	after, err = e.store.UpdateBreaker(ctx, key, func(b *state.Breaker) bool {
		var changed bool
		ok, probe, changed, no.reason = breakerAllow(b, t.breaker, now)
		no.until, no.rateLimited = refusedUntil(b, now)
		return changed
	})
	if err != nil {
		return false, false, after, refusal{reason: "state store: " + err.Error()}
	}
	cs.breakerEvent(t.name, from, breakerState(&after), label)
	if !ok {
		return false, false, after, no
	}
	return true, probe, after, refusal{}
}

func (cs *callState) breakerEvent(target, from, to, reason string) {
	if from != to {
		cs.emit(Event{Kind: EventBreaker, Target: target, From: from, To: to, Reason: reason})
	}
}

// storeCtx is the context for breaker updates after an attempt: the
// outcome must be recorded even when the caller has gone.
func storeCtx() context.Context { return context.Background() }

// update applies fn to the breaker at key and reports a change of state:
// to cs's events, or (cs nil: a stream that failed after its call returned)
// to the engine's hook under route.
func (e *Engine) update(cs *callState, t *targetPlan, key, label, route string, fn func(b *state.Breaker) bool) {
	var from, to string
	_, err := e.store.UpdateBreaker(storeCtx(), key, func(b *state.Breaker) bool {
		from = breakerState(b)
		ch := fn(b)
		to = breakerState(b)
		return ch
	})
	if err != nil {
		e.log.Warn("llmguard: breaker update failed", "key", key, "err", err)
		return
	}
	if cs != nil {
		cs.breakerEvent(t.name, from, to, label)
	} else if from != to && e.onEvent != nil {
		e.onEvent(Event{Kind: EventBreaker, Time: time.Now(), Route: route, Target: t.name, From: from, To: to, Reason: label})
	}
}

// release returns half-open probe slots without an outcome.
func (e *Engine) release(t *targetPlan, tk ticket) {
	if tk.keyProbe {
		e.update(nil, t, t.keyKey, t.keyLabel, "", func(b *state.Breaker) bool { return b.Generation == tk.keyGen && breakerRelease(b) })
	}
	if tk.targetProbe {
		e.update(nil, t, t.breakerKey, "", "", func(b *state.Breaker) bool { return b.Generation == tk.targetGen && breakerRelease(b) })
	}
}

// succeeded records a success: in the target's window (which ends a
// rate-limit cooldown), and as the probe's verdict where the call was one.
// The key's breaker only learns of a probe: a key is judged by key-scope
// verdicts alone.
func (e *Engine) succeeded(cs *callState, t *targetPlan, tk ticket) {
	t.rt.successes.Add(1)
	now := time.Now()
	if tk.keyProbe {
		e.update(cs, t, t.keyKey, t.keyLabel, "", func(b *state.Breaker) bool {
			return breakerSuccess(b, t.breaker, now, b.Generation == tk.keyGen)
		})
	}
	e.update(cs, t, t.breakerKey, "", "", func(b *state.Breaker) bool {
		return breakerSuccess(b, t.breaker, now, tk.targetProbe && b.Generation == tk.targetGen)
	})
}

// failed records a failure on the breaker its verdict names. Only auth,
// quota and billing verdicts (scope key) reach the key's breaker, which
// opens at once; a target's ill health, transport failures included (a
// reset, an EOF, an HTML 5xx page from a proxy, a truncated body, a
// timeout: scope model or provider), counts in the target's window; a
// rate limit is not ill health. route names the route for events when cs
// is nil (a stream that failed after the call returned).
func (e *Engine) failed(cs *callState, t *targetPlan, tk ticket, pe *provider.Error, route string) {
	v := &pe.Verdict
	now := time.Now()
	t.rt.failures.Add(1)
	t.rt.mu.Lock()
	t.rt.lastErr, t.rt.lastFailed = pe.Error(), now
	t.rt.mu.Unlock()
	keyProbe := func(b *state.Breaker) bool { return tk.keyProbe && b.Generation == tk.keyGen }
	targetProbe := func(b *state.Breaker) bool { return tk.targetProbe && b.Generation == tk.targetGen }
	reason := pe.Error()
	switch {
	case v.Class == classify.RateLimited && v.Scope == classify.ScopeKey:
		e.release(t, ticket{targetProbe: tk.targetProbe, targetGen: tk.targetGen})
		e.update(cs, t, t.keyKey, t.keyLabel, route, func(b *state.Breaker) bool {
			return breakerRateLimited(b, t.breaker, now, v.Wait, keyProbe(b))
		})
	case v.Class == classify.RateLimited:
		e.release(t, ticket{keyProbe: tk.keyProbe, keyGen: tk.keyGen})
		e.update(cs, t, t.breakerKey, "", route, func(b *state.Breaker) bool {
			return breakerRateLimited(b, t.breaker, now, v.Wait, targetProbe(b))
		})
	case v.Scope == classify.ScopeKey:
		e.release(t, ticket{targetProbe: tk.targetProbe, targetGen: tk.targetGen})
		f := keyFault(v, now)
		e.update(cs, t, t.keyKey, t.keyLabel, route, func(b *state.Breaker) bool {
			prev := b.Fault
			ch := breakerOpenKey(b, t.breaker, now, v.Until, reason)
			return keepFault(b, prev, f) || ch
		})
	case v.Scope == classify.ScopeModel || v.Scope == classify.ScopeProvider:
		e.release(t, ticket{keyProbe: tk.keyProbe, keyGen: tk.keyGen})
		e.update(cs, t, t.breakerKey, "", route, func(b *state.Breaker) bool {
			return breakerFailure(b, t.breaker, now, reason, targetProbe(b))
		})
	default: // request scope (or unknown): the target is healthy
		e.release(t, tk)
	}
}

// static returns the route's labelled canned answer for the call, or nil.
func (cs *callState) static() *Result {
	m := cs.rp.static
	if len(m) == 0 {
		return nil
	}
	prompt := strings.ToLower(strings.TrimSpace(lastUserText(cs.c.Request)))
	answer, ok := m[prompt]
	if !ok {
		for k, v := range m {
			if strings.ToLower(strings.TrimSpace(k)) == prompt {
				answer, ok = v, true
				break
			}
		}
	}
	if !ok {
		answer, ok = m["*"]
	}
	if !ok {
		return nil
	}
	cs.emit(Event{Kind: EventSuccess, Target: "static", Reason: "static fallback", Err: cs.lastErr})
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return &Result{
		Response: &provider.Response{Provider: "static", Model: "static", Text: answer, FinishReason: provider.FinishStop},
		Target:   "static", Static: true, Attempts: cs.total, Fallbacks: cs.fallbacks, Waited: cs.waited,
	}
}

func lastUserText(req *provider.Request) string {
	if req == nil {
		return ""
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != provider.RoleUser {
			continue
		}
		var b strings.Builder
		for _, p := range m.Content {
			if p.Type == provider.PartText {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}
