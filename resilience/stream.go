package resilience

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/provider"
)

// engineStream is the Stream the engine returns: it replays the chunks up
// to the first token (metadata-only chunks, then the first chunk with
// content), then bounds every Recv that waits by the idle timeout. A mid-stream failure counts
// against the target's breaker and is marked AfterFirstToken. Like every
// provider.Stream it is not safe for concurrent use, except Close: mu guards
// what Close and the timer touch while a Recv may be running (the wait,
// closed; a Recv that waits for nothing only reads closed).
type engineStream struct {
	s       provider.Stream
	actx    context.Context
	cancel  context.CancelCauseFunc
	release func()
	onClose []func()
	idle    time.Duration
	e       *Engine
	t       *targetPlan
	route   string
	rp      *routePlan // the call's, for its events
	c       *Call
	quiet   silence // the attempt's watch for its first response byte

	meta     []provider.Chunk // content-less chunks that came before first, replayed first
	first    provider.Chunk   // the first chunk with content (the first token)
	hasFirst bool
	eof      bool
	err      error
	once     sync.Once

	// timer is the attempt's one timer: the header timeout, then the
	// first-token timeout (phase says which, set while it is stopped),
	// then, parked until a Recv first waits, the idle timeout. A wait
	// does not reset it: it notes when it began (waitStart), and the timer,
	// when it fires, cancels the stream if the wait has lasted the idle
	// timeout, or else fires again when it would have, or, when no Recv
	// waits, parks until one does (idleFire).
	timer *time.Timer
	phase atomic.Int32

	mu        sync.Mutex
	waiting   bool        // a Recv waits, since waitStart
	waitStart time.Time   // (monotonic)
	waits     int         // the Recvs that waited so far
	parked    bool        // the timer is not armed: no Recv waited since it last fired
	idled     int         // the wait the idle timeout ended (its number; 0: none)
	closed    atomic.Bool // finish ran: no timer may be armed any more (set under mu)
}

// The phases of an attempt's timer.
const (
	phaseHeader = iota
	phaseFirstToken
	phaseIdle
)

// fire is the attempt's timer firing (see engineStream.timer).
func (s *engineStream) fire() {
	switch s.phase.Load() {
	case phaseHeader:
		s.cancel(errHeaderTimeout)
	case phaseFirstToken:
		s.cancel(errFirstTokenTimeout)
	default:
		s.idleFire()
	}
}

// idleFire ends the stream's wait once it has lasted the idle timeout;
// otherwise the timer fires again when it would.
func (s *engineStream) idleFire() {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return
	}
	if !s.waiting {
		s.parked = true // until a Recv waits (closing)
		s.mu.Unlock()
		return
	}
	if waited := time.Since(s.waitStart); waited < s.idle {
		s.timer.Reset(s.idle - waited)
		s.mu.Unlock()
		return
	}
	s.idled = s.waits
	s.mu.Unlock()
	s.cancel(errIdleTimeout)
}

// errStreamClosed ends a Recv that starts after Close.
var errStreamClosed = errors.New("stream closed")

func (s *engineStream) Recv() (provider.Chunk, error) {
	if len(s.meta) > 0 {
		c := s.meta[0]
		s.meta = s.meta[1:]
		return c, nil
	}
	if s.hasFirst {
		s.hasFirst = false
		return s.first, nil
	}
	if s.err != nil {
		return provider.Chunk{}, s.err
	}
	if s.eof {
		s.err = io.EOF
		s.finish()
		return provider.Chunk{}, io.EOF
	}
	// A Recv of what the stream holds already does not wait: no wait to
	// time (a relayed stream's events mostly come so), and so no lock to
	// take against Close.
	armed := !provider.Buffered(s.s)
	if s.closing(armed) {
		pe := asProviderError(s.t, fmt.Errorf("%w: %w", errStreamClosed, context.Canceled))
		pe.AfterFirstToken = true
		s.err = pe
		return provider.Chunk{}, pe
	}
	c, err := s.s.Recv()
	idled := false
	if armed {
		s.mu.Lock()
		s.waiting = false
		idled = s.idled == s.waits
		s.mu.Unlock()
	}
	if err == nil {
		return c, nil
	}
	if err == io.EOF {
		s.err = io.EOF
		s.finish()
		return provider.Chunk{}, io.EOF
	}
	var pe *provider.Error
	if idled && context.Cause(s.actx) == errIdleTimeout {
		pe = timeoutError(s.t, "stream idle for "+s.idle.String()+" after its first token", true)
	} else {
		cp := *asProviderError(s.t, err)
		cp.AfterFirstToken = true
		pe = &cp
	}
	s.err = pe
	if s.actx.Err() == nil || context.Cause(s.actx) == errIdleTimeout {
		// Not the caller going away: the target broke mid-stream.
		s.e.failed(nil, s.t, grant{}, pe, s.route)
	}
	s.finish()
	return provider.Chunk{}, pe
}

// closing reports whether Close ran, noting a wait first when armed
// (under the lock: no timer is armed once finish ran). The first wait
// arms the timer.
func (s *engineStream) closing(armed bool) bool {
	if !armed {
		return s.closed.Load()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return true
	}
	s.waits++
	s.waiting, s.waitStart = true, time.Now()
	switch {
	case s.timer == nil:
		// The first-token timer fired as the token came: one of its own.
		s.timer = time.AfterFunc(s.idle, s.idleFire)
	case s.parked:
		s.parked = false
		s.timer.Reset(s.idle)
	}
	return false
}

// finish releases the attempt's resources once.
func (s *engineStream) finish() { s.once.Do(s.doFinish) }

func (s *engineStream) doFinish() {
	s.mu.Lock()
	s.closed.Store(true)
	if s.timer != nil {
		s.timer.Stop()
	}
	s.mu.Unlock()
	_ = s.s.Close()
	s.cancel(context.Canceled)
	s.release()
	for _, f := range s.onClose {
		f()
	}
	if n := provider.Malformed(s.s); n > 0 {
		s.e.log.Warn("llmguard: skipped malformed stream events", "target", s.t.name,
			"request_id", s.s.RequestID(), "malformed_events", n)
		s.e.emit(s.rp, s.c, Event{Kind: EventMalformed, Target: s.t.name, Malformed: n})
	}
}

// Close releases the stream; it may be called at any time, more than once,
// also while another goroutine is in Recv.
func (s *engineStream) Close() error {
	s.finish()
	return nil
}

func (s *engineStream) RequestID() string { return s.s.RequestID() }

// MalformedEvents implements provider.MalformedReporter: the events the
// target's stream skipped so far (EventMalformed reports them all once it
// ends).
func (s *engineStream) MalformedEvents() int { return provider.Malformed(s.s) }

// Buffered implements provider.BufferReporter: the chunks replayed up to
// the first token are in memory; then the target's stream says.
func (s *engineStream) Buffered() bool {
	if len(s.meta) > 0 || s.hasFirst {
		return true
	}
	return s.err == nil && !s.eof && provider.Buffered(s.s)
}

// newReplayStream streams a stored answer (an idempotent call's earlier
// success): its text with the model, id and prompt usage, each tool call whole, then the
// finish reason with the usage.
func newReplayStream(r *provider.Response) *provider.ChunkStream {
	chunks := make([]provider.Chunk, 0, len(r.ToolCalls)+2)
	start := r.Usage.Prompt()
	chunks = append(chunks, provider.Chunk{Text: r.Text, Model: r.Model, ID: r.ID, Usage: &start})
	for i, tc := range r.ToolCalls {
		chunks = append(chunks, provider.Chunk{ToolCall: &provider.ToolCallDelta{
			Index: i, ID: tc.ID, Name: tc.Name, Arguments: string(tc.Arguments), Extra: tc.Extra}})
	}
	u := r.Usage
	chunks = append(chunks, provider.Chunk{FinishReason: r.FinishReason, Usage: &u})
	return &provider.ChunkStream{Chunks: chunks, ID: r.RequestID}
}
