package resilience

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
)

// The Chat path. A non-streaming call is made upstream as a stream and
// assembled: a non-streaming upstream sends its headers only when the whole
// answer is done, so a long answer (30-120 s are common) would be cut by
// the header timeout, the only way to tell it from silence. As a stream,
// silence is caught by the header, first-token and idle timeouts, and a
// long answer runs to the call's deadline. A relaying adapter's stream
// rebuilds the provider's own answer (provider.RawAnswerer), which the
// answer carries as Response.Raw. A Chat is a plain upstream call in three
// cases: an adapter that cannot stream (its Stream fails with
// errors.ErrUnsupported, as the MCP sampling adapter does); a target whose
// stream broke during an answer (the answer is asked for whole at once,
// and Chats to that target stay plain for its breaker cooldown: a provider
// whose streams break may still answer whole); and an answer that cannot
// be long, its max_tokens at the target's pace (speed.go).

// errCallDeadline ends the assembly of an answer at the call's deadline.
var errCallDeadline = errors.New("call deadline")

// finalGrace is how long a complete answer's stream is read on for its
// terminator.
const finalGrace = time.Second

// chatAttempt makes one non-streaming attempt: a stream up to its first
// token (see streamAttempt), then the rest of it assembled into the answer
// (see collect). outOfTime reports a failure caused by the caller's context or by
// the call's time running out: the call is out of time, and the target not
// to blame.
func (cs *callState) chatAttempt(ctx context.Context, t *targetPlan, req *provider.Request, n int, left time.Duration) (_ answer, _ *provider.Error, outOfTime bool) {
	start := time.Now()
	out, pe, outOfTime := cs.chatOnce(ctx, t, req, n, left)
	if pe == nil && out.resp != nil {
		t.rt.speed.note(time.Since(start), out.resp)
	}
	return out, pe, outOfTime
}

// chatOnce is chatAttempt but for the pace it learns: asked for whole
// while the target's streams break (wholeUntil), plainly when the answer
// cannot be long (speed.go), otherwise as a stream.
func (cs *callState) chatOnce(ctx context.Context, t *targetPlan, req *provider.Request, n int, left time.Duration) (_ answer, _ *provider.Error, outOfTime bool) {
	if time.Now().UnixNano() < t.rt.wholeUntil.Load() {
		return cs.plainChat(ctx, t, req, left, cs.rp.headerTimeout, 0)
	}
	if expect, ok := t.rt.speed.expected(req, cs.rp.firstTokenTimeout); ok {
		// Cut at the first-token timeout plus the expected time; silence
		// past silent_after (or the expected time) then a hang-up is the
		// timeout it is on a stream (silent.go).
		limit := min(cs.rp.firstTokenTimeout+expect, cs.rp.headerTimeout)
		out, pe, outOfTime := cs.plainChat(ctx, t, req, left, limit, max(cs.rp.silentAfter, expect))
		if pe != nil && !outOfTime && pe.Verdict.Class == classify.Timeout {
			t.rt.speed.forget() // slower than its pace said: stream until it shows it anew
		}
		return out, pe, outOfTime
	}
	sreq := *req
	sreq.Stream, sreq.Assemble = true, true // collect asks for the raw answer
	out, pe, outOfTime := cs.streamAttempt(ctx, t, &sreq, func() {}, left)
	if pe != nil && errors.Is(pe, errors.ErrUnsupported) && ctx.Err() == nil {
		return cs.plainChat(ctx, t, req, cs.left(), cs.rp.headerTimeout, 0)
	}
	if pe != nil {
		return answer{}, pe, outOfTime
	}
	resp, pe, outOfTime := cs.collect(ctx, t, out.stream)
	if pe != nil {
		cs.wastePrompt(t) // answered, then failed: billed for nothing
	}
	if pe != nil && !outOfTime && pe.Verdict.Class != classify.Timeout && ctx.Err() == nil {
		// The stream broke during the answer, and nothing reached the
		// client: ask for the answer whole, now and for the target's
		// breaker cooldown, in case its streams break where its answers
		// do not. The broken stream is not held against the target; the
		// whole answer's outcome is. It counts as an attempt of its own.
		now := time.Now()
		cs.e.wholeLearned(t, now.Add(t.breaker.cooldown))
		v := pe.Verdict
		cs.emit(Event{Kind: EventFailure, Target: t.name, Attempt: n, MaxAttempts: t.retry.maxAttempts, Verdict: &v, Err: pe,
			Reason: "stream broke during the answer; asking for it whole"})
		cs.total.Add(1)
		cs.emit(Event{Kind: EventAttempt, Target: t.name, Attempt: n, MaxAttempts: t.retry.maxAttempts})
		return cs.plainChat(ctx, t, req, cs.left(), cs.rp.headerTimeout, 0)
	}
	if pe != nil {
		return answer{}, pe, outOfTime
	}
	return answer{resp: resp}, nil, false
}

// collect reads the rest of a stream whose first token has arrived into the
// answer. The route's idle timeout bounds each wait and the call's time
// left bounds the whole. Nothing has reached the client yet, so a failure
// here is the attempt's like any other (retried or fallen back from), not a
// broken stream. A stream that delivered its finish reason with usage is
// complete without its terminator: it is read on for at most finalGrace
// (so that the connection ends cleanly and is reused), then closed.
func (cs *callState) collect(ctx context.Context, t *targetPlan, es *engineStream) (*provider.Response, *provider.Error, bool) {
	defer es.finish()
	resp, pe, outOfTime := cs.assemble(ctx, t, es)
	if resp != nil {
		if ra, ok := es.s.(provider.RawAnswerer); ok {
			resp.Raw = ra.RawAnswer()
		}
		resp.RateLimit = streamRateLimit(es.s)
	}
	return resp, pe, outOfTime
}

func (cs *callState) assemble(ctx context.Context, t *targetPlan, es *engineStream) (*provider.Response, *provider.Error, bool) {
	a := newAssembler(t)
	for i := range es.meta {
		a.add(&es.meta[i])
	}
	if es.hasFirst {
		a.add(&es.first)
	}
	if es.eof {
		return a.response(es.s.RequestID()), nil, false
	}
	deadline := time.AfterFunc(max(cs.left(), 0), func() { es.cancel(errCallDeadline) })
	defer deadline.Stop()
	wait := func() time.Duration {
		if a.final {
			return min(cs.rp.idleTimeout, finalGrace)
		}
		return cs.rp.idleTimeout
	}
	idle := time.AfterFunc(wait(), func() { es.cancel(errIdleTimeout) })
	defer idle.Stop()
	for {
		c, err := es.s.Recv()
		fired := !idle.Stop()
		if err == nil {
			if !a.add(&c) {
				return nil, tooLong(t), false
			}
			idle.Reset(wait())
			continue
		}
		if err == io.EOF || a.resp.FinishReason != "" {
			return a.response(es.s.RequestID()), nil, false
		}
		switch cause := context.Cause(es.actx); {
		case ctx.Err() != nil:
			return nil, asProviderError(t, err), true
		case cause == errCallDeadline:
			return nil, timeoutError(t, "answer not complete within the call's deadline", false), true
		case cause == errIdleTimeout && fired:
			return nil, timeoutError(t, "stream idle for "+cs.rp.idleTimeout.String()+" during the answer", false), false
		}
		pe := *asProviderError(t, err)
		pe.AfterFirstToken = false // the client has seen nothing
		return nil, &pe, false
	}
}

// tooLong is the failure of an answer longer than maxAnswer.
func tooLong(t *targetPlan) *provider.Error {
	return &provider.Error{Provider: t.provider, Model: t.model, Verdict: classify.Verdict{
		Class: classify.Unknown, Scope: classify.ScopeRequest,
		Message: "unknown: the answer exceeds 32 MiB",
	}}
}

// plainChat makes a non-streaming upstream call, bounded by full (the
// header timeout, or less for a call asked for plainly by its pace) or the
// time left, whichever is shorter. With silentAfter > 0, a call that got
// no response for longer and then lost its connection timed out (see
// silent.go). outOfTime is as for chatAttempt.
func (cs *callState) plainChat(ctx context.Context, t *targetPlan, req *provider.Request, left, full, silentAfter time.Duration) (_ answer, _ *provider.Error, outOfTime bool) {
	limit := min(full, left)
	actx := ctx
	if dl, ok := ctx.Deadline(); !ok || !dl.Before(time.Now().Add(limit)) {
		// The per-attempt cap comes first: it needs a timer of its own.
		// Otherwise the caller's deadline bounds the attempt already (and
		// context.WithTimeout would arm no timer either): skip the child.
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeoutCause(ctx, limit, errHeaderTimeout)
		defer cancel()
	}
	tctx, quiet := actx, (*silence)(nil)
	if silentAfter > 0 {
		tctx, quiet = watchSilence(actx)
	}
	resp, err := t.adapter.Chat(tctx, req)
	if err == nil && resp != nil {
		return answer{resp: resp}, nil, false
	}
	if err == nil {
		err = errors.New("adapter returned no response and no error")
	}
	if quiet != nil {
		if pe := quiet.hungUp(actx, t, err, silentAfter); pe != nil {
			return answer{}, pe, false
		}
	}
	pe, outOfTime := cs.attemptError(ctx, actx, t, err, errHeaderTimeout, limit, full, "no response within")
	return answer{}, pe, outOfTime
}
