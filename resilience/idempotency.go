package resilience

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/maypok86/otter/v2"

	"github.com/llmguard/llmguard/internal/wait"
	"github.com/llmguard/llmguard/provider"
)

// idempotencyKey is the call's explicit IdempotencyKey, or, when its route
// caches, the SHA-256 of the canonical request (JSON with sorted map keys).
// "" means the call is not deduplicated.
func (e *Engine) idempotencyKey(rp *routePlan, c *Call) string {
	if c.IdempotencyKey != "" {
		return "key:" + c.IdempotencyKey
	}
	if rp.cacheTTL <= 0 {
		return ""
	}
	h := sha256.New()
	if !writeRequest(h, c.Request) {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// chatOnce runs a deduplicated call: a stored result is returned while
// fresh; concurrent duplicates share one flight. The flight runs detached
// from the first caller's cancellation (bounded by the call's own deadline)
// so one caller leaving does not fail the others; it holds its request
// (provider.Request.Acquire) while it runs, as it may outlive its caller.
func (e *Engine) chatOnce(ctx context.Context, rp *routePlan, c *Call, key string) (*Result, error) {
	ck := rp.name + "\x00" + key
	ttl := rp.cacheTTL
	if ttl <= 0 {
		ttl = idempotencyTTL
	}
	if r, ok := e.cache.get(ck, time.Now()); ok {
		e.emitCached(rp, c, r)
		return r, nil
	}
	ran := false
	ch := e.sf.DoChan(ck, func() (any, error) {
		ran = true
		if r, ok := e.cache.get(ck, time.Now()); ok {
			return r, nil
		}
		if !c.Request.Acquire() {
			// Its first caller left before the flight began, and its
			// request is no longer its own.
			return nil, &RouteError{Route: rp.name, Err: ErrDeadline}
		}
		defer c.Request.Release()
		if e.results != nil {
			return e.chatShared(context.WithoutCancel(ctx), rp, c, ck, ttl)
		}
		r, err := e.chat(context.WithoutCancel(ctx), rp, c)
		if err == nil && !r.Static && !r.Cached {
			e.cache.put(ck, r, time.Now().Add(ttl))
		}
		return r, err
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		r := res.Val.(*Result)
		if !ran || r.Cached {
			cp := *r
			cp.Cached = true
			e.emitCached(rp, c, &cp)
			return &cp, nil
		}
		return r, nil
	case <-ctx.Done():
		return nil, &RouteError{Route: rp.name, Err: ErrDeadline}
	}
}

// cachedResult is a stored success.
type cachedResult struct {
	res     Result
	expires time.Time
}

// resultCache holds successful results, bounded by entries and bytes. The
// otter cache is built on first use, so engines that never cache start no
// goroutines. Expiry is checked at read time.
type resultCache struct {
	maxEntries, maxBytes int64
	once                 sync.Once
	c                    *otter.Cache[string, *cachedResult]
}

func newResultCache(maxEntries, maxBytes int64) *resultCache {
	return &resultCache{maxEntries: maxEntries, maxBytes: maxBytes}
}

func (rc *resultCache) init() {
	rc.once.Do(func() {
		// Every entry weighs at least maxBytes/maxEntries, so the byte bound
		// also bounds the number of entries.
		floor := uint64(rc.maxBytes / rc.maxEntries)
		rc.c = otter.Must(&otter.Options[string, *cachedResult]{
			MaximumWeight: uint64(rc.maxBytes),
			Weigher: func(k string, v *cachedResult) uint32 {
				w := max(uint64(len(k))+resultSize(&v.res), floor)
				return uint32(min(w, 1<<32-1))
			},
		})
	})
}

func resultSize(r *Result) uint64 {
	n := uint64(256)
	if r.Response != nil {
		n += uint64(len(r.Response.Text) + len(r.Response.ID) + len(r.Response.Model) + len(r.Response.RequestID) +
			len(r.Response.Raw))
		for _, tc := range r.Response.ToolCalls {
			n += uint64(len(tc.ID) + len(tc.Name) + len(tc.Arguments) + 64)
		}
	}
	return n
}

func (rc *resultCache) get(key string, now time.Time) (*Result, bool) {
	rc.init()
	v, ok := rc.c.GetIfPresent(key)
	if !ok {
		return nil, false
	}
	if !now.Before(v.expires) {
		rc.c.Invalidate(key)
		return nil, false
	}
	r := v.res
	if r.Response != nil {
		resp := *r.Response
		r.Response = &resp
	}
	r.Cached = true
	r.Attempts, r.Fallbacks, r.Waited, r.Cost, r.Wasted = 0, 0, 0, 0, 0
	return &r, true
}

func (rc *resultCache) put(key string, r *Result, expires time.Time) {
	rc.init()
	cp := *r
	if cp.Response != nil {
		resp := *cp.Response
		cp.Response = &resp
	}
	rc.c.Set(key, &cachedResult{res: cp, expires: expires})
}

// emitCached reports a call answered from the idempotency store or by a
// concurrent duplicate's flight: a success event with Reason "cached".
func (e *Engine) emitCached(rp *routePlan, c *Call, r *Result) {
	if e.onEvent == nil && c.OnEvent == nil {
		return
	}
	ev := Event{Kind: EventSuccess, Time: time.Now(), Route: rp.name, Target: r.Target, Reason: "cached"}
	if e.onEvent != nil {
		e.onEvent(ev)
	}
	if c.OnEvent != nil {
		c.OnEvent(ev)
	}
}

// streamCached serves a deduplicated stream from the result cache: a stored
// success (from a Chat or a finished stream) is replayed as chunks. ok is
// false when nothing replayable is stored. Concurrent duplicate streams are
// not single-flighted: each runs until one has finished and been stored.
func (e *Engine) streamCached(rp *routePlan, c *Call, key string) (*StreamResult, bool) {
	r, ok := e.cache.get(rp.name+"\x00"+key, time.Now())
	if !ok || r.Response == nil || len(r.Response.Thinking) > 0 {
		// Thinking blocks are not replayed (their fields are kept verbatim
		// for the next turn, not as deltas): such an answer runs again.
		return nil, false
	}
	e.emitCached(rp, c, r)
	return &StreamResult{Stream: newReplayStream(r.Response), Target: r.Target, Cached: true}, true
}

// recordStream passes a stream's chunks through and, once the answer they
// make is complete (its usage with or after the finish reason: the gateway
// reads the stream's end after the client has its answer), or when it ends
// properly (io.EOF, or Close after a finish reason), stores it under key
// for later duplicates. An answer with thinking blocks is not stored.
// mu guards the answer against a Close while Recv runs.
type recordStream struct {
	provider.Stream
	e   *Engine
	key string
	ttl time.Duration
	t   *targetPlan

	mu      sync.Mutex
	answer  *assembler
	discard bool // stored already, or not to be stored
}

func (e *Engine) recordStream(s provider.Stream, rp *routePlan, key string, t *targetPlan) *recordStream {
	ttl := rp.cacheTTL
	if ttl <= 0 {
		ttl = idempotencyTTL
	}
	return &recordStream{Stream: s, e: e, key: rp.name + "\x00" + key, ttl: ttl, t: t, answer: newAssembler(t)}
}

func (s *recordStream) Recv() (provider.Chunk, error) {
	c, err := s.Stream.Recv()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err == nil:
		s.add(&c)
		if s.answer.final {
			s.store() // complete: a duplicate need not wait for the stream's end
		}
	case err == io.EOF:
		s.store()
	default:
		s.discard = true
	}
	return c, err
}

// Buffered implements provider.BufferReporter for the stream recorded.
func (s *recordStream) Buffered() bool { return provider.Buffered(s.Stream) }

// Close stores an answer that got its finish reason, then closes the stream.
func (s *recordStream) Close() error {
	s.mu.Lock()
	if s.answer.resp.FinishReason != "" {
		s.store()
	}
	s.discard = true
	s.mu.Unlock()
	return s.Stream.Close()
}

// store puts the answer in the cache once, unless discarded. s.mu is held.
func (s *recordStream) store() {
	if s.discard {
		return
	}
	s.discard = true
	resp := s.answer.response(s.Stream.RequestID())
	r := &Result{Response: resp, Target: s.t.name, Cost: cost(s.t, resp.Usage)}
	s.e.cache.put(s.key, r, time.Now().Add(s.ttl))
}

// add adds a chunk to the answer; an answer with thinking blocks is not
// stored (see streamCached). s.mu is held.
func (s *recordStream) add(c *provider.Chunk) {
	if s.discard {
		return
	}
	if c.Thinking != nil || !s.answer.add(c) {
		s.discard = true
	}
}

// Shared results: with Options.Results, a deduplicated Chat claims its key
// in the shared store before it calls, publishes its success there, and a
// duplicate arriving at another engine (another replica) while the claim
// holds waits for that result instead of calling the provider again.

// sharedPoll is how often a duplicate asks the shared store for the result
// of the call another engine is making.
const sharedPoll = 20 * time.Millisecond

// sharedResult is a Result as the shared store keeps it.
type sharedResult struct {
	Response *provider.Response `json:"response"`
	Target   string             `json:"target"`
	Cost     float64            `json:"cost,omitempty"`
}

// chatShared runs the call at ck once across the engines sharing
// e.results: a stored result is returned (Cached), a claim is taken and
// the call made, or another engine's call is waited for, until the call's
// deadline (ErrDeadline). A claim that ends without a result (that call
// failed, or its engine died and the claim expired) is claimed in turn. A
// failing store leaves the call to run here.
func (e *Engine) chatShared(ctx context.Context, rp *routePlan, c *Call, ck string, ttl time.Duration) (*Result, error) {
	deadline := e.newCallState(ctx, rp, c).deadline
	for {
		raw, claimed, err := e.results.Claim(ctx, ck, time.Until(deadline)+time.Second)
		if err != nil {
			return e.chatStore(ctx, rp, c, ck, ttl, false)
		}
		if raw != nil {
			if r := e.sharedHit(ck, raw, ttl); r != nil {
				return r, nil
			}
			return e.chatStore(ctx, rp, c, ck, ttl, false)
		}
		if claimed {
			return e.chatStore(ctx, rp, c, ck, ttl, true)
		}
		for {
			if !time.Now().Before(deadline) {
				return nil, &RouteError{Route: rp.name, Err: ErrDeadline}
			}
			if err := wait.For(ctx, min(sharedPoll, time.Until(deadline))); err != nil {
				return nil, &RouteError{Route: rp.name, Err: ErrDeadline}
			}
			raw, inFlight, err := e.results.Result(ctx, ck)
			if err != nil {
				return e.chatStore(ctx, rp, c, ck, ttl, false)
			}
			if raw != nil {
				if r := e.sharedHit(ck, raw, ttl); r != nil {
					return r, nil
				}
			}
			if !inFlight {
				break // the claim ended without a result: claim it
			}
		}
	}
}

// chatStore makes the call and stores its success, locally and, when
// publish (it holds the claim), in the shared store; a failure releases
// the claim.
func (e *Engine) chatStore(ctx context.Context, rp *routePlan, c *Call, ck string, ttl time.Duration, publish bool) (*Result, error) {
	r, err := e.chat(ctx, rp, c)
	ok := err == nil && !r.Static && !r.Cached
	if ok {
		e.cache.put(ck, r, time.Now().Add(ttl))
	}
	if !publish {
		return r, err
	}
	var raw []byte
	if ok {
		raw, _ = json.Marshal(sharedResult{Response: r.Response, Target: r.Target, Cost: r.Cost})
	}
	if raw != nil {
		_ = e.results.Publish(storeCtx(), ck, raw, ttl)
	} else {
		_ = e.results.Release(storeCtx(), ck)
	}
	return r, err
}

// sharedHit decodes a result from the shared store and keeps it locally
// until ttl; nil when it does not decode.
func (e *Engine) sharedHit(ck string, raw []byte, ttl time.Duration) *Result {
	var sr sharedResult
	if err := json.Unmarshal(raw, &sr); err != nil || sr.Response == nil {
		return nil
	}
	r := &Result{Response: sr.Response, Target: sr.Target, Cost: sr.Cost}
	e.cache.put(ck, r, time.Now().Add(ttl))
	cp := *r
	cp.Cached, cp.Cost = true, 0
	return &cp
}
