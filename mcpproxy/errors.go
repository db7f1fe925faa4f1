package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/mcpcall"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file is the one place where a proxied call's failures become what
// the agent sees: an isError tool result of exactly one line naming the
// server, the tool and the cause, and saying what to do.

// skippedError: the server was not tried (down, or its breaker open).
type skippedError struct {
	server, why string
	until       time.Time
}

func (e *skippedError) Error() string {
	s := fmt.Sprintf("skipped: upstream %q %s", e.server, e.why)
	if !e.until.IsZero() {
		s += "; retry after " + clock(e.until)
	}
	return s
}

// refusedError: the server answered the call with a JSON-RPC error.
type refusedError struct{ rpc *jsonrpc.Error }

func (e *refusedError) Error() string {
	return fmt.Sprintf("the server refused the call (%d): %s", e.rpc.Code, e.rpc.Message)
}

// attemptsError: a retry-safe tool failed every attempt.
type attemptsError struct {
	n   int
	err error
}

func (e *attemptsError) Error() string { return fmt.Sprintf("%d attempts failed", e.n) }
func (e *attemptsError) Unwrap() error { return e.err }

// attemptTimeoutError: an attempt of a retry-safe tool had no answer in time.
type attemptTimeoutError struct{ d time.Duration }

func (e *attemptTimeoutError) Error() string {
	return fmt.Sprintf("no answer within the attempt timeout %s", e.d)
}

// admit returns the session a call may use now: at once when the server
// is up and its breaker admits the call (probe: the half-open probe),
// after the server's start when it is starting, and a *skippedError at
// once when it is down or its breaker is open. A session in avoid (one a
// call just saw fail) is waited out: the supervisor is replacing it.
func (u *upstream) admit(ctx context.Context, avoid ...*mcp.ClientSession) (*mcp.ClientSession, bool, error) {
	for {
		u.mu.Lock()
		ph := u.phase
		if ph == up && u.cs != nil && slices.Contains(avoid, u.cs) {
			ph = starting
		}
		switch ph {
		case up:
			if ok, probe := u.br.allow(time.Now()); ok && u.cs != nil {
				cs := u.cs
				u.mu.Unlock()
				return cs, probe, nil
			}
			err := &skippedError{server: u.cfg.Name, why: "is failing (breaker open: " + u.br.reason + ")", until: u.br.openUntil}
			if u.br.halfOpen {
				err.until = time.Time{}
				err.why = "is being probed after failing (" + u.br.reason + ")"
			}
			u.mu.Unlock()
			return nil, false, err
		case down:
			err := &skippedError{server: u.cfg.Name, why: "is down (" + u.why + "); it restarts then", until: u.br.openUntil}
			u.mu.Unlock()
			return nil, false, err
		case stopped:
			u.mu.Unlock()
			return nil, false, &skippedError{server: u.cfg.Name, why: "is stopped: llmguard is shutting down"}
		}
		ch := u.changed // starting: wait for it
		u.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, false, fmt.Errorf("upstream %q did not start in time: %w", u.cfg.Name, ctx.Err())
		}
	}
}

// record counts a call's outcome in the server's breaker: an answer (a
// JSON-RPC error too: the server is alive) is a success, a transport
// failure or timeout a failure, a cancelled call nothing.
func (u *upstream) record(probe bool, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := time.Now()
	_, refused := serverRefused(err)
	switch {
	case err == nil || refused:
		u.br.success(now, probe)
	case errors.Is(err, context.Canceled):
		u.br.release(probe)
	default:
		wasOpen := u.br.open
		u.br.failure(now, classify.Line(classify.Redact(err.Error())), probe)
		if u.br.open && !wasOpen {
			u.log.Warn(fmt.Sprintf("llmguard mcp: upstream %q breaker open: %s; skipped until %s", u.cfg.Name, u.br.reason, clock(u.br.openUntil)))
		}
	}
}

// failureCause is err as the cause in a line.
func failureCause(u *upstream, err error) string {
	var sk *skippedError
	if errors.As(err, &sk) {
		return sk.Error()
	}
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Op == "dial" {
		return fmt.Sprintf("upstream %q is unreachable (%s)", u.cfg.Name, classify.Line(oe.Error()))
	}
	if connLost(err) {
		u.mu.Lock()
		why := u.why
		if u.closing != "" {
			why = u.closing
		}
		u.mu.Unlock()
		if why != "" {
			return fmt.Sprintf("upstream %q stopped during the call (%s)", u.cfg.Name, why)
		}
		return fmt.Sprintf("upstream %q stopped during the call (the connection closed)", u.cfg.Name)
	}
	return classify.Line(classify.Redact(err.Error()))
}

// JSON-RPC codes the SDK's client gives a request its own side could not
// complete: transport failures, not the server's answer.
const (
	codeRejected      = -32005 // the transport could not deliver it (jsonrpc2.ErrRejected)
	codeServerClosing = -32004
	codeClientClosing = -32003
)

// serverRefused returns the JSON-RPC error with which the server answered
// the call, if err is one.
func serverRefused(err error) (*jsonrpc.Error, bool) {
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		return nil, false
	}
	switch rpc.Code {
	case codeRejected, codeServerClosing, codeClientClosing:
		return nil, false
	}
	return rpc, true
}

// connLost reports whether err says the connection to the server ended
// (it crashed, exited or was cut): the call may have reached it. A stdio
// server's pipes say so with a write to a process that is gone (EPIPE) or
// to a pipe exec closed once it exited (os.ErrClosed).
func connLost(err error) bool {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) && (rpc.Code == codeServerClosing || rpc.Code == codeClientClosing) {
		return true
	}
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrClosed) || errors.Is(err, syscall.EPIPE)
}

// notSent reports whether err says the request never reached the server:
// its connection could not be made. Sending it again is safe for any tool.
func notSent(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// mayHaveRun is the stored answer of a tool that is not retry-safe after
// its call reached the server and failed there: it may have run, so it is
// not sent again, and a repeat within the TTL gets this line instead of a
// second run.
func mayHaveRun(et *exposedTool, u *upstream, err error, runFor time.Duration) *outcome {
	var cause string
	switch {
	case errors.Is(err, context.Canceled):
		cause = "cancelled while it ran on upstream " + fmt.Sprintf("%q", u.cfg.Name) + " (the cancellation was passed on)"
	case errors.Is(err, context.DeadlineExceeded):
		cause = fmt.Sprintf("no answer from upstream %q within %s; the call was cancelled there", u.cfg.Name, runFor)
	default:
		cause = failureCause(u, err)
	}
	line := fmt.Sprintf("%s: %s; it may have run, so llmguard did not send it again (the tool is not idempotent): check its effect before calling again; an identical call within %s gets this answer, one with a new _meta idempotencyKey runs anew",
		et.label(), cause, u.cfg.CacheTTL)
	return &outcome{res: lineResult(line), keep: true}
}

// failureLine is the line of a call that has no answer: err from the
// flight, or the caller's own deadline or cancellation.
func (p *Proxy) failureLine(ctx context.Context, et *exposedTool, err error, start time.Time) string {
	u := et.u
	var pe *mcpcall.PanicError
	switch {
	case errors.As(err, &pe):
		return fmt.Sprintf("%s: llmguard internal error: %v; this is a bug in llmguard (details in its log)", et.label(), pe.Value)
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return fmt.Sprintf("%s: cancelled by the client; the cancellation was passed on to upstream %q", et.label(), u.cfg.Name)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return fmt.Sprintf("%s: no answer from upstream %q within this tool's %s deadline; the call goes on there until %s: call again with the same arguments to get its result (it will not run twice)",
			et.label(), u.cfg.Name, et.timeout, clock(start.Add(et.runFor)))
	}
	var sk *skippedError
	var ae *attemptsError
	var rf *refusedError
	switch {
	case errors.As(err, &sk):
		return et.label() + ": " + classify.Line(sk.Error())
	case errors.As(err, &rf):
		return classify.Line(fmt.Sprintf("%s: %s; fix the call's arguments (the tool did not run)", et.label(), classify.Redact(rf.Error())))
	case errors.As(err, &ae):
		return classify.Line(fmt.Sprintf("%s: %d attempts failed (last: %s); retry in a minute", et.label(), ae.n, failureCause(u, ae.err)))
	}
	return classify.Line(fmt.Sprintf("%s: %s; retry in a minute", et.label(), failureCause(u, err)))
}

// lineResult is an isError result of one line.
func lineResult(line string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: classify.Line(line)}}}
}
