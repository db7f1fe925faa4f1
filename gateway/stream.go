package gateway

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/sse"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// streamEncoder writes canonical chunks in a client dialect.
type streamEncoder interface {
	// start writes the stream's head; id is the upstream's message id
	// ("" when unknown), kept when it has the dialect's prefix.
	start(model, id string, u *provider.Usage) error
	chunk(c *provider.Chunk) error
	finish(reason string, u provider.Usage) error
	fail(e *apiError) error
}

// guard is one upstream stream's context with an idle watchdog: when the
// stream is silent for the idle timeout, the context is cancelled, which
// ends a blocked Recv. It is the last line behind the engine's own timeouts,
// so a stream can never hang.
type guard struct {
	ctx    context.Context
	cancel context.CancelFunc
	timer  *time.Timer
	idle   time.Duration
}

func newGuard(parent context.Context, idle time.Duration) *guard {
	ctx, cancel := context.WithCancelCause(parent)
	g := &guard{ctx: ctx, idle: idle}
	g.cancel = func() { cancel(nil) }
	g.timer = time.AfterFunc(idle, func() { cancel(errStalled) })
	return g
}

var errStalled = errors.New("gateway: upstream stream stalled")

func (g *guard) kick() { g.timer.Reset(g.idle) }

func (g *guard) stop() {
	g.timer.Stop()
	g.cancel()
}

// pump copies one logical stream to the client, continuing it on another
// target when it breaks after tokens went out.
type pump struct {
	s       *Server
	in      *inbound
	call    *resilience.Call
	enc     streamEncoder
	sw      *sse.Writer
	target  string
	acc     *access // the request's access-log record
	started bool
	text    strings.Builder // text sent to the client so far
	tools   bool            // a tool-call fragment was sent
	finish  string          // the finish reason, once seen
	usage   provider.Usage
	// usageFinal: usage arrived with or after the finish reason, so the
	// answer is complete even if the terminator never comes.
	usageFinal bool
}

func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, in *inbound, call *resilience.Call) {
	ctx := r.Context()
	g := newGuard(ctx, s.opts.StreamIdleTimeout)
	sr, err := s.eng.Stream(g.ctx, call)
	if err != nil {
		g.stop()
		s.fail(w, r, in.dialect, call.Route, err)
		return
	}
	h := w.Header()
	setResultHeaders(h, in.dialect, sr.Target, sr.Attempts, sr.Fallbacks, sr.Stream.RequestID())
	var dropped []string
	sr.Stream, dropped = peekDropped(sr.Stream)
	setDropped(h, rsStreamDropped(in, sr.Stream, dropped))
	if sr.Cached {
		h.Set("X-Llmguard-Cached", "true")
		h.Set("Idempotent-Replayed", "true")
	}
	if sr.Static {
		h.Set("X-Llmguard-Static", "true")
	}
	h.Set("X-Accel-Buffering", "no")
	sw := sse.NewWriter(w)
	w.WriteHeader(http.StatusOK)

	bp := s.bufs.Get().(*[]byte)
	defer s.putBuf(bp)
	p := &pump{s: s, in: in, call: call, sw: sw, target: sr.Target, acc: accessOf(w)}
	_, model, _ := strings.Cut(sr.Target, "/")
	switch in.dialect {
	case DialectAnthropic:
		p.enc = &anStream{w: sw, buf: *bp, id: "msg_" + randText(), model: model}
	case DialectResponses:
		p.enc = newRsStream(sw, *bp, in, s.now().Unix(), s.keeper(r, in))
	default:
		p.enc = &oaStream{w: sw, buf: *bp, id: "chatcmpl-" + randText(),
			created: s.now().Unix(), includeUsage: in.includeUsage}
	}
	p.run(ctx, sr.Stream, g)
}

func (p *pump) run(ctx context.Context, st provider.Stream, g *guard) {
	for {
		c, err := st.Recv()
		if err == nil {
			g.kick()
			if werr := p.write(&c); werr != nil {
				st.Close()
				g.stop()
				return // the client went away
			}
			if p.finish != "" && p.usageFinal {
				// Complete: don't wait for a terminator that may never come.
				st.Close()
				g.stop()
				p.end()
				return
			}
			continue
		}
		st.Close()
		stalled := errors.Is(context.Cause(g.ctx), errStalled)
		g.stop()
		if errors.Is(err, io.EOF) || p.finish != "" {
			p.end()
			return
		}
		if ctx.Err() != nil {
			return // the client went away
		}
		if stalled {
			err = &provider.Error{Err: errStalled, AfterFirstToken: true, Verdict: classify.Verdict{
				Class: classify.Timeout, Scope: classify.ScopeModel, Retryable: true, Fallback: true,
				Message: "upstream stream stalled (no data for " + p.s.opts.StreamIdleTimeout.String() + ")"}}
		}
		p.s.log.Warn("gateway: stream broke after first token", "target", p.target, "err", err.Error())
		if next, ng, target := p.continueOn(ctx); next != nil {
			p.s.log.Info("gateway: stream continued", "from", p.target, "to", target)
			// Headers went out long ago: say it in an SSE comment, which
			// clients ignore and people debugging read.
			_ = p.sw.Comment("llmguard: " + p.target + " broke; continued on " + target)
			st, g, p.target = next, ng, target
			p.acc.noteTarget(target)
			p.usage, p.usageFinal = provider.Usage{}, false
			continue
		}
		if !p.started {
			_ = p.startNow()
		}
		e := fromStream(err)
		p.acc.noteStreamError(e.status)
		_ = p.enc.fail(e)
		return
	}
}

func (p *pump) startNow() error {
	p.started = true
	_, model, _ := strings.Cut(p.target, "/")
	return p.enc.start(model, "", nil)
}

func (p *pump) write(c *provider.Chunk) error {
	if !p.started {
		p.started = true
		model := c.Model
		if model == "" {
			_, model, _ = strings.Cut(p.target, "/")
		}
		if err := p.enc.start(model, c.ID, c.Usage); err != nil {
			return err
		}
	}
	p.acc.noteChunk(c)
	p.text.WriteString(c.Text)
	if c.ToolCall != nil {
		p.tools = true
	}
	if c.FinishReason != "" {
		p.finish = c.FinishReason
	}
	if u := c.Usage; u != nil {
		p.usage.Merge(*u)
		if p.finish != "" {
			p.usageFinal = true
		}
	}
	return p.enc.chunk(c)
}

func (p *pump) end() {
	if !p.started {
		if p.startNow() != nil {
			return
		}
	}
	_ = p.enc.finish(p.finish, p.usage)
}

// candidates are the targets after the failed one: the route's, then the
// request's fallbacks.
func (p *pump) candidates() []string {
	all := p.s.routes[p.call.Route]
	if all == nil {
		all = []string{p.call.Route}
	}
	all = append(append([]string(nil), all...), p.call.Fallbacks...)
	for i, t := range all {
		if t == p.target {
			return all[i+1:]
		}
	}
	out := all[:0]
	for _, t := range all {
		if t != p.target {
			out = append(out, t)
		}
	}
	return out
}

// continueOn continues a text answer that broke after tokens went out on a
// later target that accepts an assistant prefill (per the model catalogue),
// sending the partial answer as the prefill. When the target rejects the
// prefill, the answer is regenerated without it and continues only if it
// starts with exactly what was already sent. It returns nil when no target
// could continue (then the stream ends with an error event).
func (p *pump) continueOn(ctx context.Context) (provider.Stream, *guard, string) {
	if p.tools || p.text.Len() == 0 {
		return nil, nil, ""
	}
	if c, ok := p.enc.(interface{ canContinue() bool }); ok && !c.canContinue() {
		return nil, nil, "" // the upstream's own events went out: no other target can continue them
	}
	sent := p.text.String()
	for _, t := range p.candidates() {
		prov, model, ok := strings.Cut(t, "/")
		if !ok || !p.s.cat.Model(prov, model).Prefill {
			continue
		}
		if st, g := p.prefill(ctx, t, sent); st != nil {
			return st, g, t
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, nil, ""
}

func (p *pump) prefill(ctx context.Context, target, sent string) (provider.Stream, *guard) {
	// Providers reject an assistant prefill ending in whitespace: send it
	// trimmed and drop the repeated whitespace from the continuation.
	pre := strings.TrimRightFunc(sent, unicode.IsSpace)
	req := clone(p.call.Request)
	req.Messages = append(req.Messages, provider.Message{Role: provider.RoleAssistant,
		Content: []provider.Part{{Type: provider.PartText, Text: pre}}})
	g := newGuard(ctx, p.s.opts.StreamIdleTimeout)
	sr, err := p.s.eng.Stream(g.ctx, &resilience.Call{Route: target, Request: req})
	if err == nil {
		return &spliced{Stream: sr.Stream, skip: sent[len(pre):]}, g
	}
	g.stop()
	if !prefillRejected(err) {
		return nil, nil
	}
	// Regenerate without the prefill; keep it only if it repeats exactly
	// what the client already has.
	g = newGuard(ctx, p.s.opts.StreamIdleTimeout)
	sr, err = p.s.eng.Stream(g.ctx, &resilience.Call{Route: target, Request: p.call.Request})
	if err != nil {
		g.stop()
		return nil, nil
	}
	var acc strings.Builder
	var tail provider.Chunk
	for acc.Len() < len(sent) {
		c, err := sr.Stream.Recv()
		if err != nil || c.ToolCall != nil || (c.FinishReason != "" && acc.Len()+len(c.Text) < len(sent)) {
			sr.Stream.Close()
			g.stop()
			return nil, nil
		}
		g.kick()
		acc.WriteString(c.Text)
		tail = provider.Chunk{FinishReason: c.FinishReason, Usage: c.Usage}
	}
	got := acc.String()
	if !strings.HasPrefix(got, sent) {
		sr.Stream.Close()
		g.stop()
		return nil, nil
	}
	tail.Text = got[len(sent):]
	return &spliced{Stream: sr.Stream, pending: []provider.Chunk{tail}}, g
}

// prefillRejected reports whether a continuation failed because the target
// refused the request itself (an assistant prefill it does not accept).
func prefillRejected(err error) bool {
	var re *resilience.RouteError
	var last *provider.Error
	if errors.As(err, &re) {
		last = re.Last()
	} else {
		last = provider.AsError(err)
	}
	return last != nil && last.Verdict.Class == classify.InvalidRequest
}

// spliced is a continuation stream: pending chunks first, then the upstream
// with a repeated whitespace prefix (skip) removed.
type spliced struct {
	provider.Stream
	pending []provider.Chunk
	skip    string
}

func (s *spliced) Recv() (provider.Chunk, error) {
	if len(s.pending) > 0 {
		c := s.pending[0]
		s.pending = s.pending[1:]
		return c, nil
	}
	c, err := s.Stream.Recv()
	// The client has its thinking blocks already; the continuation's own
	// would be new blocks after the text, reusing block numbers.
	c.Thinking = nil
	if err != nil || s.skip == "" || c.Text == "" {
		return c, err
	}
	n := 0
	for n < len(c.Text) && n < len(s.skip) && c.Text[n] == s.skip[n] {
		n++
	}
	c.Text = c.Text[n:]
	s.skip = s.skip[n:]
	if c.Text != "" {
		s.skip = ""
	}
	return c, nil
}

func randText() string { return rand.Text() }
