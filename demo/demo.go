package demo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/internal/wait"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
)

// Defaults for Options fields left zero.
const (
	DefaultRequests = 300
	DefaultSeed     = 1
	// Naive client: attempts per request and its fixed backoff.
	NaiveAttempts = 4
	NaiveBackoff  = 250 * time.Millisecond
	// HedgeAfter is the demo route's hedge: a call with no answer by then
	// starts the next target too, and the first answer wins.
	HedgeAfter = 400 * time.Millisecond
)

// Options configures Run. The zero value (and nil) runs the default demo.
type Options struct {
	// Requests is how many requests each client sends (0 = DefaultRequests).
	Requests int
	// Seed seeds the mocks' random faults and the engine's jitter (0 = DefaultSeed).
	Seed uint64
	// Night is how long the scripted night lasts; requests arrive evenly
	// over it (0 = 25ms per request, clamped to 2s..12s).
	Night time.Duration
	// Progress receives the live view (nil = none).
	Progress io.Writer
	// TTY redraws the live view in place with ANSI escapes; otherwise a
	// plain line is printed every Interval.
	TTY bool
	// Interval between redraws (0 = 150ms on a TTY, 1s otherwise).
	Interval time.Duration
	// Logger receives the engine's own log records (nil = discarded).
	Logger *slog.Logger
	// Metrics counts the llmguard client's events and requests, to serve
	// /metrics and the dashboard during and after the night (nil = none).
	Metrics *Metrics
}

// Outcome is what one client got on the script.
type Outcome struct {
	// Client is "llmguard", "naive" or "no-retry".
	Client string `json:"client"`
	// Description says how the client behaves.
	Description string `json:"description"`
	Served      int    `json:"served"`
	Failed      int    `json:"failed"`
	// Attempts is the number of upstream attempts the client reports.
	Attempts int `json:"attempts"`
	// MockAttempts is the number of generation requests the mock logged.
	MockAttempts int `json:"mock_attempts"`
	// Retries counts attempts after the first on the same target.
	Retries int `json:"retries"`
	// Fallbacks counts moves to another target: after a failure, or a
	// hedge's start.
	Fallbacks int `json:"fallbacks"`
	// Hedges counts the hedged attempts started (a call with no answer
	// after HedgeAfter), and HedgesWon those that answered first.
	Hedges    int `json:"hedges"`
	HedgesWon int `json:"hedges_won"`
	// Skips counts targets passed over without an attempt (breaker open,
	// rate-limit cooldown, retry budget).
	Skips int `json:"skips"`
	// WastedUSD is what the client's attempts that produced nothing cost:
	// those the provider answered 2xx and that then broke (the engine's
	// Result.Wasted and RouteError.Wasted; a baseline's error statuses
	// cost nothing).
	WastedUSD float64 `json:"wasted_usd"`
	// Waited is the total time spent waiting between attempts.
	Waited        time.Duration `json:"-"`
	WaitedSeconds float64       `json:"waited_seconds"`
	// ServedBy counts answers per target.
	ServedBy map[string]int `json:"served_by,omitempty"`
	// Failures counts failed requests by the last failure's class.
	Failures map[string]int `json:"failures,omitempty"`
}

// Summary is the result of a demo run.
type Summary struct {
	Requests       int     `json:"requests"`
	Seed           uint64  `json:"seed"`
	NightSeconds   float64 `json:"night_seconds"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	// Script is the night's phases on the primary target.
	Script []Phase `json:"script"`
	// Llmguard, Naive and NoRetry are the three clients' outcomes.
	Llmguard Outcome `json:"llmguard"`
	Naive    Outcome `json:"naive"`
	NoRetry  Outcome `json:"no_retry"`
	// Targets is the engine's final view of each target.
	Targets []resilience.TargetStatus `json:"targets"`
}

// Targets returns the demo's route, primary first (a fresh copy).
func Targets() []string { return append([]string(nil), route...) }

var route = []string{"anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash", "groq/llama-3.3-70b-versatile", "openai/gpt-4.1-mini"}

// demoRoute is the demo's route: the four providers in order, short
// timeouts and backoffs so the night fits in seconds.
func demoRoute() resilience.Route {
	failures := 5
	r := resilience.Route{
		Timeout: 20 * time.Second,
		Retry:   resilience.Retry{MaxAttempts: 3, BaseDelay: 50 * time.Millisecond, MaxDelay: time.Second, MaxWait: 3 * time.Second},
		Breaker: resilience.Breaker{Failures: &failures, Cooldown: time.Second},
		// A call with no answer by then starts the next target too.
		HedgeAfter: HedgeAfter,
	}
	for _, t := range route {
		r.Targets = append(r.Targets, resilience.Target{Name: t})
	}
	return r
}

// demoProviders are the four providers on the mock at url. The keys are
// placeholders the mock accepts; nothing leaves 127.0.0.1.
func demoProviders(url string) map[string]*registry.Settings {
	return map[string]*registry.Settings{
		"anthropic": {APIKey: "sk-ant-demo-placeholder-0000", BaseURL: url},
		"gemini":    {APIKey: "AIzaDemoPlaceholder00000000000", BaseURL: url},
		"groq":      {APIKey: "gsk_demo_placeholder_0000", BaseURL: url + "/groq/v1"},
		"openai":    {APIKey: "sk-demo-placeholder-0000", BaseURL: url + "/v1"},
	}
}

// adapters builds the demo's adapters on the mock at url.
func adapters(url string) (map[string]provider.Adapter, error) {
	a, err := registry.Build(demoProviders(url), provider.NewHTTPClient(nil))
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	return a, nil
}

// tally accumulates one client's outcome; safe for concurrent use.
type tally struct {
	mu       sync.Mutex
	o        Outcome
	done     atomic.Int64
	attempts atomic.Int64
}

func (t *tally) finish(target string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err == nil {
		t.o.Served++
		if t.o.ServedBy == nil {
			t.o.ServedBy = map[string]int{}
		}
		t.o.ServedBy[target]++
	} else {
		t.o.Failed++
		if t.o.Failures == nil {
			t.o.Failures = map[string]int{}
		}
		t.o.Failures[failureLabel(err)]++
	}
	t.done.Add(1)
}

func (t *tally) add(f func(o *Outcome)) {
	t.mu.Lock()
	f(&t.o)
	t.mu.Unlock()
}

// note counts an engine event.
func (t *tally) note(e resilience.Event) {
	switch e.Kind {
	case resilience.EventAttempt:
		t.attempts.Add(1)
	case resilience.EventRetry:
		t.add(func(o *Outcome) { o.Retries++; o.Waited += e.Wait })
	case resilience.EventFallback:
		t.add(func(o *Outcome) {
			o.Fallbacks++
			if strings.HasPrefix(e.Reason, "hedge") {
				o.Hedges++
			}
		})
	case resilience.EventHedgeWon:
		t.add(func(o *Outcome) { o.HedgesWon++ })
	case resilience.EventSkip:
		t.add(func(o *Outcome) { o.Skips++ })
	}
}

// outcome is the final outcome, with the attempts up logged.
func (t *tally) outcome(up *upstream) Outcome {
	out := t.snapshot()
	out.MockAttempts = up.attempts()
	out.WaitedSeconds = round(out.Waited.Seconds())
	return out
}

func (t *tally) snapshot() Outcome {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.o
	o.Attempts = int(t.attempts.Load())
	return o
}

// failureLabel names a failed request by its last failure's class.
func failureLabel(err error) string {
	var re *resilience.RouteError
	if errors.As(err, &re) {
		if pe := re.Last(); pe != nil {
			return string(pe.Verdict.Class)
		}
		if re.Err != nil {
			return re.Err.Error()
		}
	}
	if pe := provider.AsError(err); pe != nil {
		return string(pe.Verdict.Class)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return string(classify.Timeout)
	}
	return "error"
}

func prompt(i int) *provider.Request {
	return &provider.Request{MaxTokens: 64, Messages: []provider.Message{{Role: provider.RoleUser,
		Content: []provider.Part{{Type: provider.PartText, Text: fmt.Sprintf("summarise ticket #%d for the on-call engineer", i+1)}}}}}
}

// Run plays the scripted night for the three clients at once, each against
// its own fresh copy of the scripted mock, and returns the summary. It
// draws the live view on o.Progress while it runs. Run is safe to call
// concurrently (each call has its own mocks and engine).
func Run(ctx context.Context, o *Options) (*Summary, error) {
	opt := o.withDefaults()
	ups, err := startUpstreams(opt.Seed, opt.Night)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, up := range ups {
			up.close()
		}
	}()

	// llmguard: the real engine over the real adapters.
	lg := &tally{o: Outcome{Client: "llmguard", Description: "the engine: retries with backoff and server hints, breakers by scope, fallback over " + fmt.Sprint(len(route)) + " targets"}}
	ev := newEventLog(5)
	eng, err := newEngine(ups[0].url, &opt, lg, ev)
	if err != nil {
		return nil, err
	}
	// The two baselines talk to the primary only, through the same adapter code.
	naive, err := newBaseline(ups[1].url, NaiveAttempts, Outcome{Client: "naive",
		Description: fmt.Sprintf("primary only; retries every error up to %d attempts with a fixed %v backoff", NaiveAttempts, NaiveBackoff)})
	if err != nil {
		return nil, err
	}
	plain, err := newBaseline(ups[2].url, 1, Outcome{Client: "no-retry", Description: "primary only; one attempt per request"})
	if err != nil {
		return nil, err
	}

	view := &liveView{opt: &opt, n: opt.Requests, eng: eng, lg: lg, naive: naive.t, plain: plain.t, ev: ev, ups: ups[:1]}
	start := time.Now()
	for _, up := range ups {
		up.start.Store(start.UnixNano())
	}
	stopView := view.run(start)
	play(ctx, &opt, start, func(ctx context.Context, i int) {
		target, wasted, err := ask(ctx, eng, i, opt.Metrics)
		lg.add(func(o *Outcome) { o.WastedUSD += wasted })
		lg.finish(target, err)
	}, naive.run, plain.run)
	elapsed := time.Since(start)
	stopView()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	s := &Summary{Requests: opt.Requests, Seed: opt.Seed, NightSeconds: opt.Night.Seconds(), ElapsedSeconds: round(elapsed.Seconds()),
		Script: append([]Phase(nil), night...), Targets: eng.Status()}
	s.Llmguard, s.Naive, s.NoRetry = lg.outcome(ups[0]), naive.t.outcome(ups[1]), plain.t.outcome(ups[2])
	sort.Slice(s.Targets, func(i, j int) bool { return order(s.Targets[i].Target) < order(s.Targets[j].Target) })
	return s, nil
}

// ask sends request i through eng (a stream when streamed says so) and
// returns the target that answered and what the failed attempts cost.
func ask(ctx context.Context, eng *resilience.Engine, i int, m *Metrics) (target string, wasted float64, err error) {
	if streamed(i) {
		return streamChat(ctx, eng, i, m)
	}
	began := time.Now()
	res, err := eng.Chat(ctx, &resilience.Call{Route: "default", Request: prompt(i)})
	m.request(ctx, began, res, err)
	if err == nil {
		return res.Target, res.Wasted, nil
	}
	if re, ok := errors.AsType[*resilience.RouteError](err); ok {
		wasted = re.Wasted
	}
	return "", wasted, err
}

// withDefaults is o (nil: the zero Options) with every zero field set to
// its default.
func (o *Options) withDefaults() Options {
	opt := defaults.Copy(o)
	defaults.Positive(&opt.Requests, DefaultRequests)
	opt.Seed = cmp.Or(opt.Seed, DefaultSeed)
	if opt.Night <= 0 {
		opt.Night = min(max(time.Duration(opt.Requests)*25*time.Millisecond, 2*time.Second), 12*time.Second)
	}
	if opt.Interval <= 0 {
		opt.Interval = time.Second
		if opt.TTY {
			opt.Interval = 150 * time.Millisecond
		}
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	return opt
}

// startUpstreams starts one scripted upstream per client.
func startUpstreams(seed uint64, length time.Duration) ([]*upstream, error) {
	ups := make([]*upstream, 0, 3)
	for range 3 {
		up, err := newUpstream(seed, length, time.Now)
		if err != nil {
			for _, up := range ups {
				up.close()
			}
			return nil, err
		}
		ups = append(ups, up)
	}
	return ups, nil
}

// newEngine builds the llmguard client: the engine of the embedded config
// over the adapters talking to url, its events counted in lg and ev.
func newEngine(url string, opt *Options, lg *tally, ev *eventLog) (*resilience.Engine, error) {
	ads, err := adapters(url)
	if err != nil {
		return nil, err
	}
	eo := &resilience.Options{Routes: map[string]resilience.Route{"default": demoRoute()}, Adapters: ads, Logger: opt.Logger}
	eo.Rand = rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x5eed))
	eo.OnEvent = func(e resilience.Event) {
		lg.note(e)
		ev.note(e)
		opt.Metrics.event(e)
	}
	eng, err := resilience.New(eo)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if opt.Metrics != nil {
		opt.Metrics.eng.Store(eng)
	}
	return eng, nil
}

// play sends the night's requests, evenly spaced over opt.Night from
// start, to every client at once, and returns when all have answered or
// ctx is done.
func play(ctx context.Context, opt *Options, start time.Time, clients ...func(ctx context.Context, i int)) {
	var wg sync.WaitGroup
	gap := opt.Night / time.Duration(opt.Requests)
	for i := 0; i < opt.Requests; i++ {
		if err := wait.Until(ctx, start.Add(time.Duration(i)*gap)); err != nil {
			break
		}
		for _, c := range clients {
			wg.Add(1)
			go func() { defer wg.Done(); c(ctx, i) }()
		}
	}
	wg.Wait()
}

// order is a target's position in the route (unknown targets last).
func order(target string) int {
	for i, t := range route {
		if t == target {
			return i
		}
	}
	return len(route)
}

func round(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }
