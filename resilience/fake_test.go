package resilience

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
)

// reply is what a fake adapter does on one call.
type reply struct {
	err    *provider.Error
	delay  time.Duration // (virtual) time before answering, or until ctx ends
	text   string
	block  chan struct{} // wait for this (or ctx) before answering
	hang   bool          // never answer; wait for ctx
	chunks []string      // for streams
	// stallAfter makes a stream stop sending (until ctx ends) after that many chunks.
	stallAfter int
	// midErr ends a stream with this error after its chunks.
	midErr *provider.Error
	// meta makes a stream send a metadata-only chunk (Model and ID, no
	// content) first, as Anthropic's message_start and OpenAI's role-only
	// delta do; stallAfter and chunks count after it.
	meta bool
	// finish is the finish reason a stream's last chunk carries.
	finish string
}

// fakeAdapter answers from a per-model script; when the script runs out the
// last reply repeats; a model with no script answers "ok from <model>".
type fakeAdapter struct {
	name   string
	mu     sync.Mutex
	script map[string][]reply
	calls  map[string]int
	ctxErr map[string]int // calls that ended by their context
}

func newFake(name string) *fakeAdapter {
	return &fakeAdapter{name: name, script: map[string][]reply{}, calls: map[string]int{}, ctxErr: map[string]int{}}
}

func (f *fakeAdapter) on(model string, rs ...reply) *fakeAdapter {
	f.mu.Lock()
	f.script[model] = append(f.script[model], rs...)
	f.mu.Unlock()
	return f
}

func (f *fakeAdapter) Calls(model string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[model]
}

func (f *fakeAdapter) Name() string { return f.name }

func (f *fakeAdapter) next(model string) reply {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.calls[model]
	f.calls[model]++
	rs := f.script[model]
	if len(rs) == 0 {
		return reply{}
	}
	if n >= len(rs) {
		n = len(rs) - 1
	}
	return rs[n]
}

func (f *fakeAdapter) wait(ctx context.Context, r reply, model string) error {
	if r.delay > 0 {
		select {
		case <-time.After(r.delay):
		case <-ctx.Done():
			f.noteCtx(model)
			return ctx.Err()
		}
	}
	if r.hang {
		<-ctx.Done()
		f.noteCtx(model)
		return ctx.Err()
	}
	if r.block != nil {
		select {
		case <-r.block:
		case <-ctx.Done():
			f.noteCtx(model)
			return ctx.Err()
		}
	}
	return nil
}

func (f *fakeAdapter) noteCtx(model string) {
	f.mu.Lock()
	f.ctxErr[model]++
	f.mu.Unlock()
}

func (f *fakeAdapter) CtxEnded(model string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ctxErr[model]
}

func ctxError(name, model string, err error) *provider.Error {
	return &provider.Error{Provider: name, Model: model, Err: err, Verdict: classify.Verdict{
		Class: classify.Network, Scope: classify.ScopeRequest, Message: "network: " + err.Error()}}
}

// answer takes model's next scripted reply and waits as it says; the
// error is the reply's, or a network error when ctx ended the wait.
func (f *fakeAdapter) answer(ctx context.Context, model string) (reply, error) {
	r := f.next(model)
	if err := f.wait(ctx, r, model); err != nil {
		return r, ctxError(f.name, model, err)
	}
	if r.err != nil {
		return r, r.err
	}
	return r, nil
}

func (f *fakeAdapter) Chat(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	r, err := f.answer(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	text := r.text
	if text == "" {
		text = "ok from " + req.Model
	}
	return &provider.Response{Provider: f.name, Model: req.Model, Text: text, FinishReason: provider.FinishStop,
		Usage: provider.Usage{InputTokens: 1000, OutputTokens: 500}, RequestID: "req_ok"}, nil
}

func (f *fakeAdapter) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	r, err := f.answer(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	chunks := r.chunks
	if chunks == nil && r.text != "" {
		chunks = []string{r.text}
	}
	if chunks == nil {
		chunks = []string{"ok ", "from ", req.Model}
	}
	return &fakeStream{ctx: ctx, chunks: chunks, stallAfter: r.stallAfter, midErr: r.midErr, meta: r.meta, finish: r.finish, f: f, model: req.Model}, nil
}

type fakeStream struct {
	ctx        context.Context
	chunks     []string
	i          int
	stallAfter int
	midErr     *provider.Error
	f          *fakeAdapter
	model      string
	meta       bool
	finish     string
	ended      bool
	closed     bool
}

func (s *fakeStream) Recv() (provider.Chunk, error) {
	if s.meta {
		s.meta = false
		return provider.Chunk{Model: s.model + "-20261130", ID: "msg_fake"}, nil
	}
	if s.stallAfter > 0 && s.i >= s.stallAfter || s.stallAfter < 0 {
		<-s.ctx.Done()
		s.f.noteCtx(s.model)
		return provider.Chunk{}, ctxError(s.f.name, s.model, s.ctx.Err())
	}
	if s.i < len(s.chunks) {
		s.i++
		c := provider.Chunk{Text: s.chunks[s.i-1]}
		if s.i == len(s.chunks) {
			c.FinishReason = s.finish
		}
		return c, nil
	}
	if s.midErr != nil {
		return provider.Chunk{}, s.midErr
	}
	if !s.ended {
		// The end, as providers send it: the finish reason and the usage
		// (Chat's answer has the same).
		s.ended = true
		c := provider.Chunk{Usage: &provider.Usage{InputTokens: 1000, OutputTokens: 500}}
		if s.finish == "" {
			c.FinishReason = provider.FinishStop
		}
		return c, nil
	}
	return provider.Chunk{}, io.EOF
}

func (s *fakeStream) Close() error      { s.closed = true; return nil }
func (s *fakeStream) RequestID() string { return "req_stream" }

// perr builds a provider error with a verdict.
func perr(class classify.Class, status int, scope classify.Scope, retryable, fallback bool, wait time.Duration) *provider.Error {
	return &provider.Error{Verdict: classify.Verdict{
		Status: status, Class: class, Scope: scope, Retryable: retryable, Fallback: fallback, Wait: wait,
		RequestID: fmt.Sprintf("req_%s_%d", class, status),
		Message:   fmt.Sprintf("%d %s", status, class),
	}}
}

var (
	errOverloaded  = perr(classify.Overloaded, 529, classify.ScopeModel, true, true, 0)
	errServer      = perr(classify.ServerError, 500, classify.ScopeModel, true, true, 0)
	errAuth        = perr(classify.Auth, 401, classify.ScopeKey, false, true, 0)
	errInvalid     = perr(classify.InvalidRequest, 400, classify.ScopeRequest, false, false, 0)
	errContextLen  = perr(classify.ContextLengthExceeded, 400, classify.ScopeRequest, false, true, 0)
	errFiltered    = perr(classify.ContentFiltered, 400, classify.ScopeRequest, false, false, 0)
	errNotFoundNoF = perr(classify.NotFound, 404, classify.ScopeRequest, false, false, 0)
)

func rateLimited(wait time.Duration) *provider.Error {
	return perr(classify.RateLimited, 429, classify.ScopeModel, true, true, wait)
}

func quota(until time.Time) *provider.Error {
	e := perr(classify.QuotaExhausted, 429, classify.ScopeKey, false, true, 0)
	e.Verdict.Until = until
	return e
}

func targets(names ...string) []Target {
	ts := make([]Target, len(names))
	for i, n := range names {
		ts[i] = Target{Name: n}
	}
	return ts
}

func userReq(text string) *provider.Request {
	return &provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: text}}}}}
}

// harness is an engine over fake adapters "a" and "b" (and "c"). Run it
// in a synctest bubble: backoff and timeouts take virtual time.
type harness struct {
	t      *testing.T
	ads    map[string]*fakeAdapter
	eng    *Engine
	mu     sync.Mutex
	events []Event
}

func newHarness(t *testing.T, routes map[string]*Route, mutate func(*Options)) *harness {
	t.Helper()
	if !inBubble() {
		t.Fatal("newHarness outside a synctest bubble: its backoff would take real time")
	}
	h := &harness{t: t, ads: map[string]*fakeAdapter{}}
	adapters := map[string]provider.Adapter{}
	for _, n := range []string{"a", "b", "c"} {
		h.ads[n] = newFake(n)
		adapters[n] = h.ads[n]
	}
	cfg := make(map[string]Route, len(routes))
	for name, r := range routes {
		cfg[name] = *r
	}
	opts := Options{
		Routes:   cfg,
		Adapters: adapters,
		Rand:     rand.New(rand.NewPCG(1, 2)),
		OnEvent: func(e Event) {
			h.mu.Lock()
			h.events = append(h.events, e)
			h.mu.Unlock()
		},
	}
	if mutate != nil {
		mutate(&opts)
	}
	eng, err := New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	h.eng = eng
	return h
}

func (h *harness) Events() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Event(nil), h.events...)
}

// inBubble reports whether the caller runs in a synctest bubble
// (synctest.Wait panics outside one).
func inBubble() (in bool) {
	defer func() {
		if recover() != nil {
			in = false
		}
	}()
	synctest.Wait()
	return true
}

// sleeps lists the backoff waits the engine scheduled (its retry events).
func (h *harness) sleeps() []time.Duration {
	var out []time.Duration
	for _, e := range h.Events() {
		if e.Kind == EventRetry {
			out = append(out, e.Wait)
		}
	}
	return out
}

func (h *harness) kinds() []string {
	var out []string
	for _, e := range h.Events() {
		s := string(e.Kind) + " " + e.Target
		if e.Kind == EventBreaker {
			s += " " + e.From + "->" + e.To
		}
		out = append(out, s)
	}
	return out
}

func (h *harness) chat(route string) (*Result, error) {
	return h.eng.Chat(context.Background(), &Call{Route: route, Request: userReq("hello")})
}
