package gateway

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/provider"
)

// guard is one upstream stream's context with an idle watchdog: when the
// stream is silent for the idle timeout, the context is cancelled, which
// ends a blocked Recv. It is the last line behind the engine's own timeouts,
// so a stream can never hang. A chunk only notes the time (kick): the timer,
// when it fires, waits again for what is left of the idle time since.
//
// The context is the client request's, with its values and deadline, but
// cancelled through a link (unlink stops it) rather than as its child, so
// that a complete answer's stream may be read on to its terminator once
// the handler returned (drain).
type guard struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	unlink func() bool // stops the client request's cancelling ctx
	idle   time.Duration
	t0     time.Time
	last   atomic.Int64 // when the stream last moved, as time since t0

	mu      sync.Mutex // the timer against stop
	timer   *time.Timer
	stopped bool
}

func newGuard(parent context.Context, idle time.Duration) *guard {
	base := context.WithoutCancel(parent)
	var cancelDeadline context.CancelFunc
	if dl, ok := parent.Deadline(); ok {
		base, cancelDeadline = context.WithDeadline(base, dl)
	}
	ctx, cancel := context.WithCancelCause(base)
	if cancelDeadline != nil {
		cancelCause := cancel
		cancel = func(cause error) { cancelCause(cause); cancelDeadline() }
	}
	g := &guard{ctx: ctx, cancel: cancel, idle: idle, t0: time.Now()}
	g.unlink = context.AfterFunc(parent, func() { cancel(context.Cause(parent)) })
	g.mu.Lock()
	g.timer = time.AfterFunc(idle, g.fire)
	g.mu.Unlock()
	return g
}

var errStalled = errors.New("gateway: upstream stream stalled")

func (g *guard) kick() { g.last.Store(int64(time.Since(g.t0))) }

// fire cancels the stream when it has been silent for the idle time, or
// waits for the rest of it.
func (g *guard) fire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	if quiet := time.Since(g.t0) - time.Duration(g.last.Load()); quiet < g.idle {
		g.timer.Reset(g.idle - quiet)
		return
	}
	g.cancel(errStalled)
}

func (g *guard) stop() {
	g.unlink()
	g.mu.Lock()
	g.stopped = true
	g.timer.Stop()
	g.mu.Unlock()
	g.cancel(nil)
}

// drainGrace is how long a complete answer's stream is read on, after the
// client has its end, for the upstream's terminator.
const drainGrace = time.Second

var errDrained = errors.New("gateway: a complete stream's terminator did not come")

// drain reads a complete answer's stream on to its end, then closes it and
// the guard: the upstream's terminator (OpenAI's [DONE], Anthropic's
// message_stop) comes after the usage that completed the answer, and the
// upstream connection is reused only once it has been read to its end;
// closed before, the connection is torn down and the next call dials a
// new one. What the stream holds already is read at once; the rest in the
// background, for at most drainGrace, so that the client's answer never
// waits for it. A client that went away has its stream closed at once.
func drain(st provider.Stream, g *guard) {
	for provider.Buffered(st) {
		if _, err := st.Recv(); err != nil {
			st.Close()
			g.stop()
			return
		}
	}
	if !g.unlink() {
		st.Close() // the client went away: its context cancelled the stream's
		g.stop()
		return
	}
	go func() {
		t := time.AfterFunc(drainGrace, func() { g.cancel(errDrained) })
		for {
			if _, err := st.Recv(); err != nil {
				break
			}
		}
		t.Stop()
		st.Close()
		g.stop()
	}()
}
