package resilience

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/provider"
)

// Call is one logical call. The engine only reads it (the Request is copied
// before the model is set per target), so a Call may be reused once the call
// returns. The zero Route means "default".
type Call struct {
	// Route is a route name, or a "provider/model" target that runs under the
	// default route's policies.
	Route   string
	Request *provider.Request
	// Fallbacks are targets appended to the route for this call only, in
	// the order given, after the route's own targets (which order: cost
	// sorts; a call's Fallbacks are never sorted).
	Fallbacks []string
	// Timeout overrides the route's deadline when > 0.
	Timeout time.Duration
	// IdempotencyKey makes concurrent and repeated identical calls run once:
	// duplicates share the first call's flight, and later ones get its stored
	// success until the route's cache TTL (10 minutes when the route does
	// not cache). Stream replays a stored success (of a Chat, or
	// of a stream that ended properly) as a stream and stores its own;
	// concurrent duplicate streams are not single-flighted (each runs).
	IdempotencyKey string
	// RepeatScope, when not empty, lets the engine answer this call with
	// the held failure of an identical call in the same scope (same route,
	// Fallbacks and Request) that the engine retried to exhaustion moments
	// before, without an upstream attempt: a RouteError wrapping ErrRepeat
	// (see repeat.go and the route's RepeatHold). The scope says who asks
	// (the gateway key a request presented); it is hashed with the request,
	// never stored or logged. "": the call is never held.
	RepeatScope string
	// OnEvent receives this call's events (e.g. for MCP progress), after Options.OnEvent.
	OnEvent func(Event)
	// MaxCostUSD is this call's spend ceiling in dollars, applied with the
	// route's (the lower one rules); 0: the route's alone (see cost.go).
	MaxCostUSD float64
}

// Result is a successful call. It is the caller's to keep; a cached result
// is a copy.
type Result struct {
	Response *provider.Response
	// Target is the "provider/model" that answered.
	Target string
	// Attempts counts upstream attempts across the route.
	Attempts int
	// Fallbacks counts moves to a next target.
	Fallbacks int
	// Waited is the total time spent in backoff.
	Waited time.Duration
	// Cached: served from the idempotency cache. Static: a labelled canned answer.
	Cached, Static bool
	// Cost in dollars of the answering call, from the pricing table.
	Cost float64
	// Wasted is what the call's failed attempts cost in dollars: those the
	// provider answered and then failed, before anything reached the
	// caller (see cost.go).
	Wasted float64
}

// StreamResult is a stream that has delivered its first token. The caller
// must Close Stream; until then it holds the target's concurrency slot.
type StreamResult struct {
	// Stream yields the chunks, the first one included; idle timeouts apply.
	// When it breaks after text went out, it continues on a later target
	// (an EventContinue names it; Target stays the first).
	Stream    provider.Stream
	Target    string
	Attempts  int
	Fallbacks int
	Waited    time.Duration
	// Cached: Stream replays a stored answer (see Call.IdempotencyKey);
	// no upstream call was made.
	Cached bool
	// Static: Stream is the route's labelled canned answer (Target "static").
	Static bool
	// Wasted is what the call's failed attempts cost, as Result.Wasted.
	Wasted float64
}

// callState is one call's walk over its route: its deadline, and what it
// tried, skipped and waited. The walker's goroutine owns it: a hedge's
// branches report their attempts to the walker (see hedge.go), and only
// total, which an attempt counts when it starts, is shared with them.
type callState struct {
	e        *Engine
	rp       *routePlan
	c        *Call
	deadline time.Time

	total     atomic.Int64 // upstream attempts made (hedge branches count theirs)
	attempts  []AttemptError
	skipped   []Skip
	fallbacks int
	waited    time.Duration
	retryAt   time.Time
	// holdAt is the earliest moment a target that turned this pass away
	// (its breaker open or half-open, a rate-limit cooldown) takes calls
	// again, when that is within the target's max_wait; zero when none.
	holdAt  time.Time
	lastErr error // the RouteError once the walk failed
	// hedgedTo holds the targets a hedge has tried; the walker does not
	// try them again.
	hedgedTo map[*targetPlan]bool
	// overflowed: a target answered context_length_exceeded; overflowAt
	// is the largest known window that did (see window.go).
	overflowed bool
	overflowAt int
	// wasted is what failed attempts cost, in nano-dollars (cost.go); a
	// hedge's branches add to it.
	wasted atomic.Uint64

	// emb is set for an embeddings call (Engine.Embed): Call.Request is nil.
	emb *embedState
	// peek is what the walk last read of a target's records (records.go).
	peek atomic.Pointer[peeked]
	// req is the call's first request made for a target (requestFor),
	// allocated with the call; reqTaken says it has been handed out.
	req      provider.Request
	reqTaken atomic.Bool
}

// requestFor is req as sent to a target of model, streaming or not: req
// itself when it says so already, else a copy. The call's first copy is
// the one allocated with it (most calls make one attempt), any later one
// a new allocation, so that no two attempts, hedged or one after the
// other, ever share a copy.
func (cs *callState) requestFor(req *provider.Request, model string, stream bool) *provider.Request {
	if req == nil || (req.Model == model && req.Stream == stream) {
		return req
	}
	cp := &cs.req
	if !cs.reqTaken.CompareAndSwap(false, true) {
		cp = new(provider.Request)
	}
	*cp = *req
	cp.Model, cp.Stream = model, stream
	return cp
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
	return &callState{e: e, rp: rp, c: c, deadline: time.Now().Add(timeout)}
}

// emit delivers ev to the engine's hook, then the call's. It reads only
// what does not change during a call, so a hedge's branches may emit too.
func (cs *callState) emit(ev Event) { cs.e.emit(cs.rp, cs.c, ev) }

// left is the time until the call's deadline.
func (cs *callState) left() time.Duration { return time.Until(cs.deadline) }

// outOfTime reports that the call is out of time: the caller's context
// ended or the deadline passed (as it has when an attempt was cut short
// by the time left).
func (cs *callState) outOfTime(ctx context.Context) bool {
	return ctx.Err() != nil || cs.left() <= 0
}

// fail builds the call's RouteError. A call that made no attempt ends
// with the sentinel of what turned every target away, when that was one
// local limit: the spend ceiling (ErrMaxCost), or the concurrency limit
// (ErrConcurrencyLimit, also when the call's deadline ended its wait for a
// slot).
func (cs *callState) fail(sentinel error) error {
	if len(cs.attempts) == 0 {
		switch {
		case (sentinel == ErrExhausted || sentinel == ErrDeadline) && cs.skippedOnly(concurrencyPrefix):
			sentinel = ErrConcurrencyLimit
		case sentinel == ErrExhausted && cs.skippedOnly(maxCostPrefix):
			sentinel = ErrMaxCost
		case sentinel == ErrExhausted:
			sentinel = ErrNoTarget
		}
	}
	err := &RouteError{Route: cs.rp.name, Err: sentinel, Attempts: cs.attempts, Skipped: cs.skipped, RetryAt: cs.retryAt,
		ClientWait: cs.rp.clientWait, Wasted: cs.wastedUSD()}
	cs.lastErr = err
	cs.emit(Event{Kind: EventGiveUp, Err: err})
	return err
}

// counts are the call's attempts, fallbacks and waits, for its result.
func (cs *callState) counts() (attempts, fallbacks int, waited time.Duration) {
	return int(cs.total.Load()), cs.fallbacks, cs.waited
}
