package resilience

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"

	"github.com/llmguard/llmguard/provider"
)

// Held failures. A client that ignores x-should-retry (the Vercel AI SDK,
// LangChain JS) retries a failed call on its own, and each of its retries
// would spend the route's whole retry budget again: 3 calls, 12 upstream
// attempts, for one persistent 529 under the AI SDK; 7 and 28 under
// LangChain. So a call the engine retried to exhaustion leaves its failure
// held for the route's repeat_hold, and an identical call in that time
// (same Call.RepeatScope, route, fallbacks and request) gets it back at
// once, with no upstream attempt, as a RouteError wrapping ErrRepeat. The
// hold ends as soon as a target of the route answers any call: a failure
// is never served once the upstream has recovered.

// ErrRepeat is the sentinel of a call answered with a held failure: it
// repeats an identical call that failed moments ago after the engine had
// spent its retries on it, and made no upstream attempt itself. Its
// RouteError's Repeat says what failed, when, and until when it is held.
var ErrRepeat = errors.New("repeat of a call that just failed")

// Repeat is the held failure a repeated call was answered with
// (RouteError.Repeat).
type Repeat struct {
	// Of is the identical call's failure, as that call returned it.
	Of *RouteError
	// At is when it failed. Until is when the hold ends at the latest: a
	// target of the route answering any call ends it sooner.
	At, Until time.Time
}

// Note is the clause an edge adds to the held failure's line, e.g.
// "repeat of a call that failed at 2026-12-01T12:00:03Z after 4 upstream
// attempts; not sent upstream again before 2026-12-01T12:02:33Z unless a
// target answers another call". It names no wait in the form "retry after
// N s" or "try again in N s", which some clients (LangChain JS) read from a
// message as a wait to sleep.
func (r *Repeat) Note() string {
	n := len(r.Of.Attempts)
	s := "s"
	if n == 1 {
		s = ""
	}
	return fmt.Sprintf("repeat of a call that failed at %s after %d upstream attempt%s; not sent upstream again before %s unless a target answers another call",
		r.At.UTC().Format(time.RFC3339), n, s, r.Until.UTC().Format(time.RFC3339))
}

// Bounds of the held failures, across every route and scope: a flood of
// distinct failing calls evicts the oldest, whose repeats then run again.
const (
	maxHeld      = 4096
	maxHeldBytes = 8 << 20
)

// repeatGate is a route plan's gate on its held failures: nil while the
// route holds none that may still be served, so that a call computes no
// repeat key (no request hash).
type repeatGate struct {
	atomic.Pointer[holdGate]
}

// holdGate says whether a route may hold a live failure: until is the
// latest end of its holds (Unix ns), mark the highest count of its targets'
// successes any of them was stored at. Once the count has moved past mark,
// a target has answered since every hold began.
type holdGate struct {
	until, mark int64
}

// heldFailure is one held failure; mark is the count of the route's
// targets' successes when it was stored.
type heldFailure struct {
	err       *RouteError
	at, until time.Time
	mark      int64
}

// repeatTable holds failures by repeat key, bounded by entries and bytes.
// The otter cache is built on first use (no goroutines for engines that
// never hold). Expiry is checked on the engine's clock at read time.
type repeatTable struct {
	once sync.Once
	c    *otter.Cache[string, *heldFailure]
	// keyed counts the repeat keys computed (each hashes a request).
	keyed atomic.Int64
}

func (rt *repeatTable) init() {
	rt.once.Do(func() {
		floor := uint64(maxHeldBytes / maxHeld) // so the byte bound bounds the count too
		rt.c = otter.Must(&otter.Options[string, *heldFailure]{
			MaximumWeight: maxHeldBytes,
			Weigher: func(k string, v *heldFailure) uint32 {
				return uint32(min(max(uint64(len(k))+routeErrorSize(v.err), floor), 1<<32-1))
			},
		})
	})
}

// routeErrorSize estimates the bytes a RouteError holds.
func routeErrorSize(e *RouteError) uint64 {
	n := uint64(256 + len(e.Route))
	for _, a := range e.Attempts {
		n += uint64(128 + len(a.Target) + len(a.Err.Verdict.Message) + len(a.Err.Verdict.RequestID) + len(a.Err.Verdict.ProviderType))
	}
	for _, s := range e.Skipped {
		n += uint64(128 + len(s.Target) + len(s.Reason))
	}
	return n
}

// successMark is the count of successes of rp's targets: it moves whenever
// one of them answers a call, on any route.
func successMark(rp *routePlan) int64 {
	var n int64
	for _, t := range rp.targets {
		n += t.rt.successes.Load()
	}
	return n
}

// repeatOf returns, when c repeats a call whose failure rp holds, that
// failure as ErrRepeat's RouteError; key is c's repeat key when it was
// computed ("" otherwise: nothing to match, no hash).
func (e *Engine) repeatOf(rp *routePlan, c *Call) (key string, err error) {
	if c.RepeatScope == "" || rp.repeatHold <= 0 {
		return "", nil
	}
	g := rp.repeat.Load()
	if g == nil {
		return "", nil
	}
	now := time.Now()
	if now.UnixNano() >= g.until || successMark(rp) != g.mark {
		rp.repeat.CompareAndSwap(g, nil) // nothing live: stop hashing
		return "", nil
	}
	key = e.repeatKey(rp, c)
	if key == "" {
		return "", nil
	}
	e.repeats.init()
	h, ok := e.repeats.c.GetIfPresent(key)
	if !ok {
		return key, nil
	}
	if !now.Before(h.until) || successMark(rp) != h.mark {
		e.repeats.c.Invalidate(key)
		return key, nil
	}
	re := &RouteError{Route: rp.name, Err: ErrRepeat, Repeat: &Repeat{Of: h.err, At: h.at, Until: h.until},
		ClientWait: rp.clientWait}
	e.emitRepeat(rp, c, re)
	return key, re
}

// holdFailure holds err for repeats of c when the engine spent its retries
// on it: more than one upstream attempt (a client's retry of a call tried
// once costs what it would cost without the gateway), a failure that may
// pass by itself (not a rejected request or a bad key: clients don't retry
// those, and a key's breaker answers them), and a call its caller did not
// cut short. key is c's repeat key if repeatOf computed it.
func (e *Engine) holdFailure(ctx context.Context, rp *routePlan, c *Call, key string, err error) {
	if c.RepeatScope == "" || rp.repeatHold <= 0 || ctx.Err() != nil {
		return
	}
	var re *RouteError
	if !errors.As(err, &re) || re.Repeat != nil || len(re.Attempts) < 2 {
		return
	}
	if pe, _, _ := re.Terminal(); pe != nil {
		return
	}
	if key == "" {
		if key = e.repeatKey(rp, c); key == "" {
			return
		}
	}
	now := time.Now()
	h := &heldFailure{err: re, at: now, until: now.Add(rp.repeatHold), mark: successMark(rp)}
	e.repeats.init()
	e.repeats.c.Set(key, h)
	for {
		old := rp.repeat.Load()
		g := &holdGate{until: h.until.UnixNano(), mark: h.mark}
		if old != nil && old.mark >= g.mark {
			g.until, g.mark = max(old.until, g.until), old.mark
		}
		if rp.repeat.CompareAndSwap(old, g) {
			return
		}
	}
}

// repeatKey identifies identical calls: the SHA-256 of the call's scope,
// route, fallbacks and canonical request. The scope is hashed, never kept.
func (e *Engine) repeatKey(rp *routePlan, c *Call) string {
	e.repeats.keyed.Add(1)
	h := sha256.New()
	for _, s := range []string{c.RepeatScope, rp.name} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	for _, f := range c.Fallbacks {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	h.Write([]byte{0})
	if !writeRequest(h, c.Request) {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// writeRequest writes the canonical form of req (JSON, map keys sorted) to
// h; false when it has none.
func writeRequest(h io.Writer, req *provider.Request) bool {
	if req == nil {
		return false
	}
	b, err := json.Marshal(req)
	if err != nil {
		return false
	}
	h.Write(b)
	return true
}

// emitRepeat reports a call answered with a held failure: a give_up event
// with Reason "repeat".
func (e *Engine) emitRepeat(rp *routePlan, c *Call, err error) {
	e.emit(rp, c, Event{Kind: EventGiveUp, Reason: "repeat", Err: err})
}
