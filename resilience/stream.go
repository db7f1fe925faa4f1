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
// content), then arms the idle timeout around every Recv. A mid-stream failure counts
// against the target's breaker and is marked AfterFirstToken. Like every
// provider.Stream it is not safe for concurrent use, except Close: mu guards
// what Close touches while a Recv may be running (the idle timer, closed;
// a Recv that arms no timer only reads closed).
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

	meta     []provider.Chunk // content-less chunks that came before first, replayed first
	first    provider.Chunk   // the first chunk with content (the first token)
	hasFirst bool
	eof      bool
	err      error
	once     sync.Once

	mu     sync.Mutex
	timer  *time.Timer // the idle timer, created by the first Recv that waits
	closed atomic.Bool // finish ran: no timer may be armed any more (set under mu)
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
	// A Recv of what the stream holds already does not wait: no idle
	// timer to arm (a relayed stream's events mostly come so), and so no
	// lock to take against Close.
	armed := !provider.Buffered(s.s)
	if s.closing(armed) {
		pe := asProviderError(s.t, fmt.Errorf("%w: %w", errStreamClosed, context.Canceled))
		pe.AfterFirstToken = true
		s.err = pe
		return provider.Chunk{}, pe
	}
	c, err := s.s.Recv()
	stopped := true
	if armed {
		s.mu.Lock()
		stopped = s.timer.Stop()
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
	if !stopped && context.Cause(s.actx) == errIdleTimeout {
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

// closing reports whether Close ran, arming the idle timer first when
// armed (under the lock: no timer is armed once finish ran).
func (s *engineStream) closing(armed bool) bool {
	if !armed {
		return s.closed.Load()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return true
	}
	if s.timer == nil {
		s.timer = time.AfterFunc(s.idle, func() { s.cancel(errIdleTimeout) })
	} else {
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
	if mr, ok := s.s.(provider.MalformedReporter); ok {
		if n := mr.MalformedEvents(); n > 0 {
			s.e.log.Warn("llmguard: skipped malformed stream events", "target", s.t.name,
				"request_id", s.s.RequestID(), "malformed_events", n)
			s.e.emit(s.rp, s.c, Event{Kind: EventMalformed, Target: s.t.name, Malformed: n})
		}
	}
}

// Close releases the stream; it may be called at any time, more than once,
// also while another goroutine is in Recv.
func (s *engineStream) Close() error {
	s.finish()
	return nil
}

func (s *engineStream) RequestID() string { return s.s.RequestID() }

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
