package resilience

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
)

// The attempt: one upstream call on one target, bounded by the per-attempt
// timeouts (headers, first token, then idle), each cut to the call's time
// left. Only a full configured timeout is the target's; an attempt cut
// short by the caller or the call's deadline blames nothing.

// answer is a successful attempt's: a response, or a stream whose first
// token arrived, or embeddings.
type answer struct {
	resp   *provider.Response
	stream *engineStream
	emb    *provider.EmbedResponse
}

// attemptResult is how one attempt on target ended.
type attemptResult struct {
	target  *targetPlan
	answer  answer
	failure *provider.Error // nil on success, or when no attempt was made
	// skip says why no attempt was made (no concurrency slot, no pacing
	// turn); the grant has been returned. skipUntil is when a pacing turn
	// comes (zero: unknown), which the walk may hold for.
	skip      string
	skipUntil time.Time
	// listed: failure is the call's to report (false: a hedge branch the
	// call cancelled, which is not the target's failure).
	listed bool
}

// attempt makes one upstream attempt on t (the n-th there) with what
// admission granted: a concurrency slot, timeouts, the adapter call, then
// the outcome to the breakers and the target's statistics. It counts in
// the call's total once it has a slot. It may run on a hedge branch's
// goroutine: it changes nothing of the call but total.
func (cs *callState) attempt(ctx context.Context, stream bool, t *targetPlan, g grant, n int) attemptResult {
	e := cs.e
	res := attemptResult{target: t}
	left := cs.left()
	if why := cs.overCeiling(t); why != "" {
		e.release(t, g)
		res.skip = why
		return res
	}
	if why := cs.paceTurn(ctx, t, g, left); why.reason != "" {
		e.release(t, g)
		res.skip, res.skipUntil = why.reason, why.until
		return res
	}
	release, refused := cs.acquireSlot(ctx, t, left)
	if refused != "" {
		t.rt.pace.cancel(time.Now(), true, g.paced)
		e.release(t, g)
		res.skip = refused
		return res
	}
	left = cs.left()
	cs.total.Add(1)
	cs.emit(Event{Kind: EventAttempt, Target: t.name, Attempt: n, MaxAttempts: t.retry.maxAttempts})
	start := time.Now()
	req := cs.requestFor(cs.c.Request, t.model, stream)
	var outOfTime bool
	switch {
	case cs.emb != nil:
		res.answer, res.failure, outOfTime = cs.embedAttempt(ctx, t, left)
		release()
	case stream:
		res.answer, res.failure, outOfTime = cs.streamAttempt(ctx, t, req, release, left)
	default:
		res.answer, res.failure, outOfTime = cs.chatAttempt(ctx, t, req, n, left)
		release()
	}
	pe := res.failure
	t.rt.pace.done(rateLimitOf(res.answer, pe), time.Now())
	if pe != nil && context.Cause(ctx) == errHedgeCancelled {
		// A hedge branch the call cancelled: not the target's failure.
		e.release(t, g)
		return res
	}
	if pe == nil {
		e.succeeded(cs, t, g)
		cs.emit(Event{Kind: EventSuccess, Target: t.name, Attempt: n, MaxAttempts: t.retry.maxAttempts, Elapsed: time.Since(start)})
		return res
	}
	res.listed = true
	v := pe.Verdict
	cs.emit(Event{Kind: EventFailure, Target: t.name, Attempt: n, MaxAttempts: t.retry.maxAttempts, Verdict: &v, Err: pe,
		Elapsed: time.Since(start)})
	if outOfTime || ctx.Err() != nil {
		// The caller went away, or its deadline or the call's remaining
		// time ended the attempt before the full per-attempt timeout: that
		// says nothing about the target. The call ends with ErrDeadline.
		e.release(t, g)
		return res
	}
	e.failed(cs, t, g, pe, "")
	return res
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
// caller's context or the time left ended the attempt earlier, outOfTime
// is set: the adapter's error when the caller's deadline was due, else a
// timeout verdict naming the call's deadline.
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
// left. outOfTime is as for chatAttempt.
func (cs *callState) streamAttempt(ctx context.Context, t *targetPlan, req *provider.Request, release func(), left time.Duration) (_ answer, _ *provider.Error, outOfTime bool) {
	actx, cancel := context.WithCancelCause(ctx)
	// The stream the attempt answers, made now: its one timer (see
	// engineStream.fire) bounds the headers, then the first token, then
	// each wait of the stream.
	es := &engineStream{actx: actx, cancel: cancel, release: release, idle: cs.rp.idleTimeout,
		e: cs.e, t: t, route: cs.rp.name, rp: cs.rp, c: cs.c}
	limit := min(cs.rp.headerTimeout, left)
	es.timer = time.AfterFunc(limit, es.fire)
	tctx := es.quiet.watch(actx)
	s, err := t.adapter.Stream(tctx, req)
	armed := es.timer.Stop()
	fail := func(err error, cause error, full time.Duration, what string) (answer, *provider.Error, bool) {
		pe, outOfTime := cs.attemptError(ctx, actx, t, err, cause, limit, full, what)
		cancel(context.Canceled)
		release()
		return answer{}, pe, outOfTime
	}
	if err != nil || s == nil {
		if err == nil {
			err = errors.New("adapter returned no stream and no error")
		}
		if pe := es.quiet.hungUp(actx, t, err, cs.rp.silentAfter); pe != nil {
			cancel(context.Canceled)
			release()
			return answer{}, pe, false
		}
		return fail(err, errHeaderTimeout, cs.rp.headerTimeout, "no response headers within")
	}
	limit = min(cs.rp.firstTokenTimeout, cs.left())
	if armed {
		// Stopped before it fired: the timer now bounds the first token.
		// (Once fired, the attempt's context is cancelled already.)
		es.phase.Store(phaseFirstToken)
		es.timer.Reset(limit)
	}
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
	if armed = armed && es.timer.Stop(); armed {
		es.phase.Store(phaseIdle)
		es.parked = true // until a Recv waits
	} else {
		es.timer = nil // fired: a Recv that waits arms a timer of its own
	}
	if err != nil && err != io.EOF {
		s.Close()
		cs.wastePrompt(t) // answered, then failed: billed for nothing
		return fail(err, errFirstTokenTimeout, cs.rp.firstTokenTimeout, "no first token within")
	}
	es.s, es.meta, es.first, es.hasFirst, es.eof = s, meta, first, err == nil, err == io.EOF
	return answer{stream: es}, nil, false
}

// maxMetaChunks bounds the content-less chunks a stream may send before its
// first token; beyond it the stream counts as started.
const maxMetaChunks = 64

// hasContent reports whether c is a token: text, a tool call delta,
// thinking or a finish reason (not only metadata such as Model, ID, Usage).
func hasContent(c *provider.Chunk) bool {
	return c.Text != "" || c.ToolCall != nil || c.Thinking != nil || c.FinishReason != ""
}

// timeoutError is the verdict for an attempt the engine timed out itself.
func timeoutError(t *targetPlan, what string, afterFirst bool) *provider.Error {
	return &provider.Error{
		Provider:        t.provider,
		Model:           t.model,
		AfterFirstToken: afterFirst,
		Verdict: classify.Verdict{
			Class:     classify.Timeout,
			Retryable: true,
			Scope:     classify.ScopeModel,
			Fallback:  true,
			Message:   "timeout: " + what,
		},
		Err: context.DeadlineExceeded,
	}
}

// asProviderError returns err as a *provider.Error, wrapping an error an
// adapter should not have returned as an unknown, fallback-able failure.
func asProviderError(t *targetPlan, err error) *provider.Error {
	if pe := provider.AsError(err); pe != nil {
		return pe
	}
	return &provider.Error{
		Provider: t.provider,
		Model:    t.model,
		Verdict: classify.Verdict{
			Class:    classify.Unknown,
			Scope:    classify.ScopeModel,
			Fallback: true,
			Message:  "unknown: " + classify.Line(err.Error()),
		},
		Err: err,
	}
}
