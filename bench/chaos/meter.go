package chaos

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/provider"
)

// This file: the meter, one adapter wrapper that every strategy's upstream
// calls go through, so that attempts, their time on the wire and what they
// cost are counted the same way for llmguard and for the baselines.

// attempt is one upstream call as the meter saw it.
type attempt struct {
	start, end time.Time
	// billed: the upstream answered 2xx, so the provider bills the prompt
	// and the tokens it streamed.
	billed bool
	// ok: the stream ended properly (io.EOF).
	ok   bool
	cost float64
	// target is the attempt's "provider/model"; rid the request id of
	// its failure, when the upstream answered one.
	target, rid string
}

// trace collects one request's attempts; safe for concurrent use (a hedge
// runs two at once, and the engine closes a hedge's loser after the call
// returned).
type trace struct {
	mu       sync.Mutex
	started  int // attempts begun; those ended are in attempts
	attempts []attempt
}

func (t *trace) begin() {
	t.mu.Lock()
	t.started++
	t.mu.Unlock()
}

func (t *trace) add(a attempt) {
	t.mu.Lock()
	t.attempts = append(t.attempts, a)
	t.mu.Unlock()
}

// snapshot returns the attempts ended so far, and how many have begun and
// not ended (a stream still open).
func (t *trace) snapshot() (ended []attempt, open int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]attempt(nil), t.attempts...), t.started - len(t.attempts)
}

type traceKey struct{}

// withTrace returns ctx carrying t, which the meter fills.
func withTrace(ctx context.Context, t *trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// meter wraps an adapter and records every call in the trace of the call's
// context (calls without one in stray).
type meter struct {
	provider.Adapter
	target string
	price  catalog.Price
	stray  *trace
}

func (m *meter) traceOf(ctx context.Context) *trace {
	if t, ok := ctx.Value(traceKey{}).(*trace); ok {
		return t
	}
	return m.stray
}

// Chat is metered like a stream that is read whole (the engine streams, and
// so do the baselines; Chat is here for completeness).
func (m *meter) Chat(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	t := m.traceOf(ctx)
	t.begin()
	a := attempt{start: time.Now(), target: m.target}
	res, err := m.Adapter.Chat(ctx, req)
	a.end = time.Now()
	a.rid = requestID(err)
	if err == nil {
		a.billed, a.ok = true, true
		a.cost = m.price.Cost(provider.EstimateTokens(req), res.Usage.OutputTokens)
	}
	t.add(a)
	return res, err
}

// Stream meters the stream: its attempt ends when the stream ends, breaks
// or is closed, and costs the prompt and the text deltas received (one
// token each, as the mock sends them).
func (m *meter) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	t := m.traceOf(ctx)
	t.begin()
	start := time.Now()
	st, err := m.Adapter.Stream(ctx, req)
	if err != nil {
		t.add(attempt{start: start, end: time.Now(), target: m.target, rid: requestID(err)})
		return nil, err
	}
	return &meteredStream{Stream: st, m: m, t: t, start: start, prompt: provider.EstimateTokens(req)}, nil
}

// requestID is the provider request id of a failed call ("" for none).
func requestID(err error) string {
	if pe := provider.AsError(err); pe != nil {
		return pe.Verdict.RequestID
	}
	return ""
}

// meteredStream is a metered provider.Stream. It keeps the inner stream's
// optional interfaces that the engine and the baselines read.
type meteredStream struct {
	provider.Stream
	m      *meter
	t      *trace
	start  time.Time
	prompt int
	out    int

	once sync.Once
}

func (s *meteredStream) Recv() (provider.Chunk, error) {
	c, err := s.Stream.Recv()
	if err == nil && c.Text != "" {
		s.out++
	}
	if err != nil {
		s.finish(errors.Is(err, io.EOF))
	}
	return c, err
}

func (s *meteredStream) Close() error {
	s.finish(false)
	return s.Stream.Close()
}

func (s *meteredStream) finish(ok bool) {
	s.once.Do(func() {
		s.t.add(attempt{start: s.start, end: time.Now(), billed: true, ok: ok, cost: s.m.price.Cost(s.prompt, s.out), target: s.m.target})
	})
}

// RateLimit passes on what the response announced (the engine paces by it).
func (s *meteredStream) RateLimit() *provider.RateLimit {
	if r, ok := s.Stream.(provider.RateLimitReporter); ok {
		return r.RateLimit()
	}
	return nil
}

// MalformedEvents passes on the events the adapter skipped.
func (s *meteredStream) MalformedEvents() int {
	if r, ok := s.Stream.(provider.MalformedReporter); ok {
		return r.MalformedEvents()
	}
	return 0
}
