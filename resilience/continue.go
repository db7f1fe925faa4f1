package resilience

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"unicode"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
)

// Continuation: a stream that breaks after its first token cannot be
// retried, since the caller has its text already. When what went out is
// text only (no tool call, no relayed Responses events), the engine
// continues the answer on a later target of the call's route, walked alone
// under the route's policies. A target that accepts an assistant prefill
// (per the catalogue) is sent the text so far as the prefill. Any other
// target, and one that answered a prefill with a 400 (remembered for the
// target: it is never sent one again), regenerates the answer, which goes
// on only if it starts with exactly the text already sent (deterministic
// settings and cached prompts make that common); that 400 never becomes
// the caller's error. When no target continues, the stream ends with the
// break's error, as it would have.

// continuing is the Stream of a walked streaming call (Engine.Stream): it
// relays the answering target's chunks and continues the answer when that
// stream breaks. Like every provider.Stream it is not safe for concurrent
// use, except Close.
type continuing struct {
	e    *Engine
	ctx  context.Context // the caller's
	rp   *routePlan
	c    *Call
	t    *targetPlan // the target whose stream cur is
	sent strings.Builder
	// noContinue: a tool-call fragment or a relayed Responses event went
	// out, which no other target's answer can extend.
	noContinue bool
	finished   bool // the finish reason went out

	mu     sync.Mutex
	cur    provider.Stream    // the stream being relayed
	cancel context.CancelFunc // of the continuations' context, once one started
	closed bool
}

func (e *Engine) continuing(ctx context.Context, rp *routePlan, c *Call, st provider.Stream, t *targetPlan) *continuing {
	return &continuing{e: e, ctx: ctx, rp: rp, c: c, t: t, cur: st}
}

func (s *continuing) Recv() (provider.Chunk, error) {
	for {
		// Only Recv sets cur (under mu, which Close takes): reading it here
		// needs no lock.
		c, err := s.cur.Recv()
		if err == nil {
			s.note(&c)
			return c, nil
		}
		if err == io.EOF || s.finished || s.noContinue || s.sent.Len() == 0 || s.ctx.Err() != nil {
			return c, err
		}
		pe := provider.AsError(err)
		if pe == nil || !pe.AfterFirstToken {
			return c, err
		}
		next, t := s.continueAfter(pe)
		if next == nil {
			return c, err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = next.Close()
			return c, err
		}
		s.cur = next
		s.mu.Unlock()
		from := s.t
		s.t = t
		v := pe.Verdict
		s.e.emit(s.rp, s.c, Event{Kind: EventContinue, Target: t.name, From: from.name, Verdict: &v, Err: pe})
	}
}

// note records what chunk c sends the caller.
func (s *continuing) note(c *provider.Chunk) {
	s.sent.WriteString(c.Text)
	if c.ToolCall != nil || c.Raw != nil && s.c.Request.Passthrough != nil && s.c.Request.Passthrough.Dialect == provider.DialectResponses {
		s.noContinue = true
	}
	if c.FinishReason != "" {
		s.finished = true
	}
}

// continueAfter finds the target that continues the answer after s.t broke
// with pe: the first later target of the route that does (see continueOn).
// It returns nil when none does.
func (s *continuing) continueAfter(pe *provider.Error) (provider.Stream, *targetPlan) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, nil
	}
	if s.cancel == nil {
		s.ctx, s.cancel = context.WithCancel(s.ctx)
	}
	s.mu.Unlock()
	after := false
	for _, t := range s.rp.targets {
		if t == s.t {
			after = true
			continue
		}
		if !after {
			continue
		}
		if st := s.continueOn(t); st != nil {
			return st, t
		}
		if s.ctx.Err() != nil {
			break
		}
	}
	return nil, nil
}

// continueOn continues the text sent so far on t: with a prefill when t
// accepts one, else (or when t rejects it) by regenerating the answer there
// and keeping it only if it repeats that text exactly.
func (s *continuing) continueOn(t *targetPlan) provider.Stream {
	sent := s.sent.String()
	if t.info.Prefill && !t.rt.noPrefill.Load() {
		s.e.recall(s.ctx, t)
	}
	if t.info.Prefill && !t.rt.noPrefill.Load() {
		// Providers reject an assistant prefill ending in whitespace: send
		// it trimmed and drop the repeated whitespace from the continuation.
		pre := strings.TrimRightFunc(sent, unicode.IsSpace)
		full, err := s.c.Request.Full() // a relayed request's conversation, decoded now
		if err != nil {
			return nil
		}
		req := *full
		req.Passthrough = nil // the messages differ from the client's body
		req.Messages = append(req.Messages[:len(req.Messages):len(req.Messages)], provider.Message{Role: provider.RoleAssistant,
			Content: []provider.Part{{Type: provider.PartText, Text: pre}}})
		st, err := s.streamOn(t, &req)
		if err == nil {
			return &spliced{Stream: st, skip: sent[len(pre):]}
		}
		if !prefillRejected(err) {
			return nil
		}
		s.e.noPrefillLearned(t)
	}
	st, err := s.streamOn(t, s.c.Request)
	if err != nil {
		return nil
	}
	var acc strings.Builder
	var tail provider.Chunk
	for acc.Len() < len(sent) {
		c, err := st.Recv()
		if err != nil || c.ToolCall != nil || (c.FinishReason != "" && acc.Len()+len(c.Text) < len(sent)) {
			_ = st.Close()
			return nil
		}
		acc.WriteString(c.Text)
		tail = provider.Chunk{FinishReason: c.FinishReason, Usage: c.Usage}
	}
	got := acc.String()
	if !strings.HasPrefix(got, sent) {
		_ = st.Close()
		return nil
	}
	tail.Text = got[len(sent):]
	return &spliced{Stream: st, pending: []provider.Chunk{tail}}
}

// streamOn walks t alone for req under the route's policies (its retries,
// breakers, timeouts), returning the stream once its first token arrived.
func (s *continuing) streamOn(t *targetPlan, req *provider.Request) (provider.Stream, error) {
	rp := &routePlan{routePolicy: s.rp.routePolicy, name: s.rp.name, targets: []*targetPlan{t}, maxTotal: s.rp.maxTotal,
		route: s.rp.route, targetNames: []string{t.name}}
	c := &Call{Route: s.c.Route, Request: req, Timeout: s.c.Timeout, MaxCostUSD: s.c.MaxCostUSD, OnEvent: s.c.OnEvent}
	out, _, err := s.e.newCallState(s.ctx, rp, c).walk(s.ctx, true)
	if err != nil {
		return nil, err
	}
	return out.stream, nil
}

// prefillRejected reports whether a continuation failed because the target
// refused the request itself (an assistant prefill it does not accept).
func prefillRejected(err error) bool {
	var re *RouteError
	var last *provider.Error
	if errors.As(err, &re) {
		last = re.Last()
	} else {
		last = provider.AsError(err)
	}
	return last != nil && last.Verdict.Class == classify.InvalidRequest
}

// Close releases the stream; it may be called at any time, more than once,
// also while another goroutine is in Recv.
func (s *continuing) Close() error {
	s.mu.Lock()
	s.closed = true
	cur, cancel := s.cur, s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cur.Close()
}

// Buffered implements provider.BufferReporter for the stream being
// relayed. (A break that continues waits for the next target, which
// Buffered does not foresee: the break is an error, not a chunk held.)
func (s *continuing) Buffered() bool { return provider.Buffered(s.cur) }

// MalformedEvents implements provider.MalformedReporter for the stream
// being relayed (an earlier target's are reported by its EventMalformed).
func (s *continuing) MalformedEvents() int { return provider.Malformed(s.cur) }

// RequestID is the answering target's request id.
func (s *continuing) RequestID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur.RequestID()
}

// spliced is a continuation stream: pending chunks first, then the upstream
// with a repeated whitespace prefix (skip) removed.
type spliced struct {
	provider.Stream
	pending []provider.Chunk
	skip    string
}

// Buffered implements provider.BufferReporter.
func (s *spliced) Buffered() bool { return len(s.pending) > 0 || provider.Buffered(s.Stream) }

func (s *spliced) Recv() (provider.Chunk, error) {
	if len(s.pending) > 0 {
		c := s.pending[0]
		s.pending = s.pending[1:]
		return c, nil
	}
	c, err := s.Stream.Recv()
	// The caller has its thinking blocks already; the continuation's own
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
