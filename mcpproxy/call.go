package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/llmguard/llmguard/internal/mcpcall"
	"github.com/llmguard/llmguard/internal/wait"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MetaKeys are the _meta keys of a tools/call that carry an explicit
// idempotency key: calls with the same key (for the same tool) are one
// call, whatever their arguments; calls with different keys run each.
var MetaKeys = []string{"idempotencyKey", "io.llmguard/idempotency-key"}

// Retry backoff of a retry-safe tool: full jitter up to base·2^(n-1),
// capped.
const (
	retryBase = 200 * time.Millisecond
	retryMax  = 2 * time.Second
)

// outcome is a finished call as the Group stores it.
type outcome struct {
	res  *mcp.CallToolResult
	args string // the key of the arguments that ran (for an explicit key's check)
	keep bool   // stored for repeats
}

// handler is the MCP handler of an exposed tool: every failure, a panic
// too, is an isError result of one line; it never answers a JSON-RPC error.
// It serves the tool exposed as name as its server lists it now.
func (p *Proxy) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			if r := recover(); r != nil {
				p.log.Error("mcp proxied tool panicked", "tool", name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				res, err = lineResult(fmt.Sprintf("%s: llmguard internal error: %v; this is a bug in llmguard (details in its log)", name, r)), nil
			}
		}()
		p.mu.Lock()
		et := p.tools[name]
		p.mu.Unlock()
		if et == nil {
			return lineResult(name + ": no longer offered by its upstream server; list the tools again"), nil
		}
		return p.call(ctx, et, req), nil
	}
}

func (et *exposedTool) label() string { return et.u.cfg.Name + "/" + et.tool.Name }

// call runs one proxied tool call: under its idempotency key (a repeat
// joins the running call or gets its stored result), within the tool's
// deadline, with progress while it waits.
func (p *Proxy) call(ctx context.Context, et *exposedTool, req *mcp.CallToolRequest) *mcp.CallToolResult {
	start := time.Now()
	var in mcp.CallToolParamsRaw
	if req != nil && req.Params != nil {
		in = *req.Params
	}
	argsKey, err := mcpcall.Key(et.tool.Name, in.Arguments)
	if err != nil {
		return lineResult(fmt.Sprintf("%s: %v; pass the arguments as one JSON object", et.label(), err))
	}
	key := et.u.cfg.Name + "\x00" + argsKey
	explicit := metaKey(in.Meta)
	if explicit != "" {
		key = et.u.cfg.Name + "\x00" + et.tool.Name + "\x00key:" + explicit
	}
	ctx, cancel := context.WithTimeout(ctx, et.timeout)
	defer cancel()
	prog := mcpcall.NewProgress(ctx, req, p.log)
	var onEvent func(string)
	if prog.Active() {
		onEvent = prog.Send
	}
	stop := p.keepalive(ctx, prog, et, start)
	o, _, err := p.calls.Do(ctx, key, &mcpcall.CallOptions{TTL: et.u.cfg.CacheTTL, RunFor: et.runFor}, onEvent,
		func(fctx context.Context, emit func(string)) (*outcome, error) {
			o, err := et.u.run(fctx, p, et, &in, emit)
			if o != nil {
				o.args = argsKey
			}
			return o, err
		})
	stop()
	prog.Close()
	if err == nil {
		if explicit != "" && o.args != argsKey {
			return lineResult(fmt.Sprintf("%s: idempotency key %q was used for a call with other arguments; use a new key for a new call", et.label(), explicit))
		}
		return forCaller(o.res)
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		go et.u.checkHang(et.tool.Name, time.Since(start))
	}
	return lineResult(p.failureLine(ctx, et, err, start))
}

// protocolMeta prefixes the _meta keys the protocol itself sets (the
// client's and server's info, the protocol version): each hop sets its own.
const protocolMeta = "io.modelcontextprotocol/"

// hopMeta is m as it goes on to the next hop: a copy without the
// protocol's keys and the progress token (each hop has its own).
func hopMeta(m mcp.Meta) mcp.Meta {
	out := mcp.Meta{}
	for k, v := range m {
		if k != "progressToken" && !strings.HasPrefix(k, protocolMeta) {
			out[k] = v
		}
	}
	return out
}

// forCaller is a stored result as one caller gets it: a copy with _meta
// of its own (the SDK writes its server info into a result's _meta, and
// callers of one flight share the stored result).
func forCaller(res *mcp.CallToolResult) *mcp.CallToolResult {
	r := *res
	r.Meta = hopMeta(res.Meta)
	if len(r.Meta) == 0 {
		r.Meta = nil
	}
	return &r
}

// metaKey is the explicit idempotency key of a call's _meta, or "".
func metaKey(m mcp.Meta) string {
	for _, k := range MetaKeys {
		if v, ok := m[k]; ok {
			if s := fmt.Sprint(v); s != "" {
				return s
			}
		}
	}
	return ""
}

// keepalive tells a caller that sent a progressToken, every
// ProgressInterval, that its call still runs (so a client that resets its
// timeout on progress keeps waiting). The returned stop waits until it
// has stopped.
func (p *Proxy) keepalive(ctx context.Context, prog *mcpcall.Progress, et *exposedTool, start time.Time) (stop func()) {
	if !prog.Active() {
		return func() {}
	}
	return wait.Every(ctx, p.cfg.ProgressInterval, func() {
		prog.Send(fmt.Sprintf("%s: still running (%s); llmguard waits up to %s", et.label(), time.Since(start).Round(time.Second), et.timeout))
	})
}

// run is a call's flight: attempts on the server, retried only when the
// tool is retry-safe and the failure is the transport's or a timeout.
func (u *upstream) run(ctx context.Context, p *Proxy, et *exposedTool, in *mcp.CallToolParamsRaw, emit func(string)) (*outcome, error) {
	// A tool that is not retry-safe is sent again only when its request
	// never reached the server (a failed dial).
	attempts := u.cfg.MaxAttempts
	var failed []*mcp.ClientSession // sessions that failed this call
	for n := 1; ; n++ {
		cs, probe, err := u.admit(ctx, failed...)
		if err != nil {
			return nil, err // nothing was sent
		}
		res, err := u.attempt(ctx, cs, et, in, emit)
		u.record(probe, err)
		switch rpc, refused := serverRefused(err); {
		case err == nil:
			return answer(et, res), nil
		case refused:
			return nil, &refusedError{rpc}
		case ctx.Err() != nil:
			if !et.safe {
				return mayHaveRun(et, u, ctx.Err(), et.runFor), nil
			}
			return nil, ctx.Err()
		case !et.safe && !notSent(err):
			return mayHaveRun(et, u, err, 0), nil
		case n >= attempts:
			return nil, &attemptsError{n: n, err: err}
		}
		if connLost(err) && u.ended(cs) {
			failed = append(failed, cs)
		}
		d := p.backoff(n)
		emit(fmt.Sprintf("%s attempt %d/%d: %s; retrying in %s", et.label(), n, attempts, failureCause(u, err), d.Round(time.Millisecond)))
		if wait.For(ctx, d) != nil {
			return nil, ctx.Err()
		}
	}
}

// answer is the server's answer as the caller gets it: a tool error
// reduced to one line naming the server and tool. A retry-safe tool's error
// is not stored (a repeat may run it again); every other answer is.
func answer(et *exposedTool, res *mcp.CallToolResult) *outcome {
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	if !res.IsError {
		return &outcome{res: res, keep: true}
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text + "\n"
		}
	}
	cause := lastMeaningful(text)
	if cause == "" {
		cause = "the tool failed without a message"
	}
	line := fmt.Sprintf("%s: tool error: %s", et.label(), cause)
	if !et.safe {
		line += "; not retried by llmguard (the tool is not idempotent)"
	}
	return &outcome{res: &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: line}}, Meta: res.Meta}, keep: !et.safe}
}

// attempt sends the call once, or, for a retry-safe tool with HedgeAfter,
// a second time when the first has no answer by then; the first answer
// wins and the other is cancelled.
func (u *upstream) attempt(ctx context.Context, cs *mcp.ClientSession, et *exposedTool, in *mcp.CallToolParamsRaw, emit func(string)) (*mcp.CallToolResult, error) {
	if !et.safe || u.cfg.HedgeAfter <= 0 {
		return u.once(ctx, cs, et, in, emit)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	ch := make(chan answer, 2)
	send := func() {
		res, err := u.once(ctx, cs, et, in, emit)
		ch <- answer{res, err}
	}
	go send()
	hedge := time.NewTimer(u.cfg.HedgeAfter)
	defer hedge.Stop()
	running, hedged := 1, false
	for {
		select {
		case a := <-ch:
			running--
			if a.err == nil || running == 0 {
				return a.res, a.err
			}
		case <-hedge.C:
			if !hedged {
				hedged = true
				running++
				emit(fmt.Sprintf("%s: no answer after %s; hedging with a second call", et.label(), u.cfg.HedgeAfter))
				go send()
			}
		}
	}
}

// once sends the call: its progress comes back through emit, and a
// retry-safe tool's attempt is cut at AttemptTimeout.
func (u *upstream) once(ctx context.Context, cs *mcp.ClientSession, et *exposedTool, in *mcp.CallToolParamsRaw, emit func(string)) (*mcp.CallToolResult, error) {
	actx := ctx
	if et.safe && u.cfg.AttemptTimeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, u.cfg.AttemptTimeout)
		defer cancel()
	}
	params := &mcp.CallToolParams{Name: et.tool.Name, Arguments: json.RawMessage(in.Arguments), Meta: mcp.Meta{}}
	if len(in.Arguments) == 0 {
		params.Arguments = map[string]any{}
	}
	params.Meta = hopMeta(in.Meta)
	tok, forget := u.watchProgress(func(pp *mcp.ProgressNotificationParams) { emit(progressLine(et, pp)) })
	defer forget()
	params.SetProgressToken(tok)
	res, err := cs.CallTool(actx, params)
	if err != nil && actx.Err() != nil && ctx.Err() == nil {
		return nil, &attemptTimeoutError{u.cfg.AttemptTimeout}
	}
	return res, err
}

// progressLine is an upstream progress notification as the caller sees it.
func progressLine(et *exposedTool, pp *mcp.ProgressNotificationParams) string {
	msg := pp.Message
	switch {
	case pp.Total > 0:
		msg = fmt.Sprintf("%s (%g/%g)", msg, pp.Progress, pp.Total)
	case msg == "":
		msg = fmt.Sprintf("progress %g", pp.Progress)
	}
	return et.label() + ": " + msg
}

// backoff is the wait before retry n: full jitter.
func (p *Proxy) backoff(n int) time.Duration {
	ceil := retryBase
	for i := 1; i < n && ceil < retryMax; i++ {
		ceil *= 2
	}
	ceil = min(ceil, retryMax)
	p.randMu.Lock()
	defer p.randMu.Unlock()
	return time.Duration(p.rand.Int64N(int64(ceil) + 1))
}
