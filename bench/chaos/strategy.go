package chaos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/demo"
	"github.com/llmguard/llmguard/internal/wait"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// The route every strategy serves: the primary (whose trouble the scenario
// scripts) and a healthy fallback on another provider, dearer, so that
// falling back costs something.
const (
	Primary  = "anthropic/claude-haiku-4-5"
	Fallback = "openai/gpt-4.1"
)

// Timings shared by every strategy, scaled down so that a scenario fits in
// seconds: the deadline of a request, the wait for response headers, and
// the backoff's base and cap.
const (
	Deadline      = 8 * time.Second
	HeaderTimeout = 2 * time.Second
	BaseDelay     = 100 * time.Millisecond
	MaxDelay      = 2 * time.Second
	// Attempts per target of the classic loops (llmguard's default
	// max_attempts).
	Attempts = 4
	// HedgeAfter is llmguard's first-token hedge.
	HedgeAfter = 300 * time.Millisecond
)

// Strategy is one column group of the scorecard: a way of calling the
// route.
type Strategy struct {
	// Name is the strategy's short name ("llmguard", "naive", …).
	Name string `json:"name"`
	// Description says what it does, in one line.
	Description string `json:"description"`

	// open returns a client of the targets' adapters.
	open func(ads targets, seed uint64) (client, error)
}

// targets are the adapters of the primary and the fallback (metered).
type targets struct{ primary, fallback provider.Adapter }

// client streams one request and returns once its first token arrived
// (or it failed); it is safe for concurrent use.
type client interface {
	stream(ctx context.Context, req *provider.Request) (provider.Stream, error)
}

// strategies is the scorecard's columns, llmguard first. Never mutated.
var strategies = []Strategy{
	{Name: "llmguard", Description: fmt.Sprintf("the engine over the route %s → %s: retries what can pass with full-jitter backoff under the server's hints, breakers by scope, pacing, a first-token hedge after %v, continuation of broken streams", Primary, Fallback, HedgeAfter),
		open: openEngine},
	{Name: "naive", Description: fmt.Sprintf("primary only; retries every error, %d attempts, a fixed %v apart", demo.NaiveAttempts, demo.NaiveBackoff),
		open: func(t targets, _ uint64) (client, error) {
			return &loop{targets: []provider.Adapter{t.primary}, attempts: demo.NaiveAttempts, retry: anyError, backoff: fixed(demo.NaiveBackoff)}, nil
		}},
	{Name: "no-retry", Description: "primary only; one attempt per request",
		open: func(t targets, _ uint64) (client, error) {
			return &loop{targets: []provider.Adapter{t.primary}, attempts: 1, retry: anyError}, nil
		}},
	{Name: "retry-429-5xx", Description: fmt.Sprintf("primary only; retries 429, 5xx and connection errors, %d attempts, full-jitter exponential backoff from %v (no server hints)", Attempts, BaseDelay),
		open: func(t targets, seed uint64) (client, error) {
			return &loop{targets: []provider.Adapter{t.primary}, attempts: Attempts, retry: classic, backoff: jitter(seed)}, nil
		}},
	{Name: "retry+fallback", Description: fmt.Sprintf("the retry-429-5xx loop on the primary, then the same loop on %s", Fallback),
		open: func(t targets, seed uint64) (client, error) {
			return &loop{targets: []provider.Adapter{t.primary, t.fallback}, attempts: Attempts, retry: classic, backoff: jitter(seed)}, nil
		}},
}

// Strategies returns the scorecard's strategies, llmguard first (a copy).
func Strategies() []Strategy { return append([]Strategy(nil), strategies...) }

// engine is the llmguard client.
type engine struct{ e *resilience.Engine }

func (c engine) stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	res, err := c.e.Stream(ctx, &resilience.Call{Route: "bench", Request: req})
	if err != nil {
		return nil, err
	}
	return res.Stream, nil
}

// benchRoute is llmguard's route: the defaults, with the timings above.
func benchRoute() resilience.Route {
	hedge := HedgeAfter
	return resilience.Route{
		Targets: []resilience.Target{{Name: Primary}, {Name: Fallback}},
		Timeout: Deadline,
		Retry:   resilience.Retry{MaxAttempts: Attempts, BaseDelay: BaseDelay, MaxDelay: MaxDelay, MaxWait: Deadline / 2},
		Stream: resilience.Timeouts{HeaderTimeout: HeaderTimeout, FirstTokenTimeout: Deadline / 2, IdleTimeout: Deadline / 2,
			SilentAfter: HeaderTimeout / 2},
		Hedge: resilience.Hedge{FirstTokenAfter: &hedge},
	}
}

func openEngine(t targets, seed uint64) (client, error) {
	e, err := resilience.New(&resilience.Options{
		Routes:   map[string]resilience.Route{"bench": benchRoute()},
		Adapters: map[string]provider.Adapter{"anthropic": t.primary, "openai": t.fallback},
		Rand:     rand.New(rand.NewPCG(seed, seed^0x5eed)),
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, fmt.Errorf("bench chaos: %w", err)
	}
	return engine{e}, nil
}

// loop is a baseline client: for each of its targets in turn, up to
// attempts tries while retry says the failure is worth another, backoff
// apart. Like the SDKs it stands for, it decodes streams strictly (an
// event of invalid JSON ends the stream) and cannot take back text it has
// passed on, so it retries only failures before the first token.
type loop struct {
	targets  []provider.Adapter
	attempts int
	retry    func(err error) bool
	backoff  func(k int) time.Duration
}

func (l *loop) stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	var last error
	for _, a := range l.targets {
		r := *req
		r.Model = modelOf(a)
		for k := 0; k < l.attempts; k++ {
			if k > 0 {
				if err := wait.For(ctx, l.backoff(k)); err != nil {
					return nil, last
				}
			}
			st, err := tryStream(ctx, a, &r)
			if err == nil {
				return st, nil
			}
			last = err
			if ctx.Err() != nil {
				return nil, last
			}
			if !l.retry(err) {
				break
			}
		}
	}
	return nil, last
}

// modelOf is the model the baselines ask a's provider for.
func modelOf(a provider.Adapter) string {
	if a.Name() == "anthropic" {
		return model(Primary)
	}
	return model(Fallback)
}

// model is the model part of a "provider/model" target.
func model(target string) string {
	_, m, _ := catalog.SplitTarget(target)
	return m
}

// status is the HTTP status of a failed attempt (0: no response).
func status(err error) int {
	if pe := provider.AsError(err); pe != nil {
		return pe.Verdict.Status
	}
	return 0
}

func anyError(error) bool { return true }

// classic retries what the classic loop retries: 429, 5xx and failures
// without a response (connection errors, timeouts).
func classic(err error) bool {
	s := status(err)
	return s == 0 || s == 429 || s >= 500
}

func fixed(d time.Duration) func(int) time.Duration { return func(int) time.Duration { return d } }

// jitter is full-jitter exponential backoff from BaseDelay, capped at
// MaxDelay, drawn from a source seeded with seed.
func jitter(seed uint64) func(int) time.Duration {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed^0xb0ff))
	return func(k int) time.Duration {
		ceil := min(BaseDelay<<(k-1), MaxDelay)
		mu.Lock()
		defer mu.Unlock()
		return time.Duration(rng.Int64N(int64(ceil) + 1))
	}
}

var errHeaderTimeout = errors.New("no response headers in time")

// tryStream is one attempt of a baseline: the response headers within
// HeaderTimeout, then up to the first token within the request's deadline.
// The stream it returns replays what came before the first token.
func tryStream(ctx context.Context, a provider.Adapter, req *provider.Request) (provider.Stream, error) {
	actx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(HeaderTimeout, cancel)
	st, err := a.Stream(actx, req)
	if !timer.Stop() && err != nil {
		err = fmt.Errorf("%w: %w", errHeaderTimeout, err)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	s := &strict{Stream: st, cancel: cancel}
	for {
		c, err := s.Recv()
		if err != nil {
			s.Close()
			return nil, err
		}
		s.head = append(s.head, c)
		if c.Text != "" || c.ToolCall != nil || c.FinishReason != "" {
			s.replay = true
			return s, nil
		}
	}
}

// errMalformed ends a strictly decoded stream at an event of invalid JSON.
var errMalformed = errors.New("stream event is not valid JSON")

// strict is a baseline's stream: it replays head, then relays the rest,
// and ends at the first event its adapter had to skip.
type strict struct {
	provider.Stream
	cancel context.CancelFunc
	head   []provider.Chunk
	replay bool
}

func (s *strict) Recv() (provider.Chunk, error) {
	if s.replay && len(s.head) > 0 {
		c := s.head[0]
		s.head = s.head[1:]
		return c, nil
	}
	c, err := s.Stream.Recv()
	if err == nil {
		if r, ok := s.Stream.(provider.MalformedReporter); ok && r.MalformedEvents() > 0 {
			s.Close()
			return provider.Chunk{}, errMalformed
		}
	}
	return c, err
}

func (s *strict) Close() error {
	s.cancel()
	return s.Stream.Close()
}
