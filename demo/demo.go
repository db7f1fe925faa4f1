package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/classify"
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
	// Fallbacks counts moves to another target after a failure.
	Fallbacks int `json:"fallbacks"`
	// Skips counts targets passed over without an attempt (breaker open,
	// rate-limit cooldown, retry budget).
	Skips int `json:"skips"`
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
	var opt Options
	if o != nil {
		opt = *o
	}
	if opt.Requests <= 0 {
		opt.Requests = DefaultRequests
	}
	if opt.Seed == 0 {
		opt.Seed = DefaultSeed
	}
	if opt.Night <= 0 {
		opt.Night = min(max(time.Duration(opt.Requests)*25*time.Millisecond, 2*time.Second), 12*time.Second)
	}
	if opt.Interval <= 0 {
		opt.Interval = time.Second
		if opt.TTY {
			opt.Interval = 150 * time.Millisecond
		}
	}
	logger := opt.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	n := opt.Requests

	var worlds [3]*world
	for i := range worlds {
		w, err := newWorld(opt.Seed, opt.Night, time.Now)
		if err != nil {
			for _, w := range worlds[:i] {
				w.close()
			}
			return nil, err
		}
		worlds[i] = w
	}
	defer func() {
		for _, w := range worlds {
			w.close()
		}
	}()

	// llmguard: the real engine over the real adapters.
	lgAd, err := adapters(worlds[0].url)
	if err != nil {
		return nil, err
	}
	lg := &tally{o: Outcome{Client: "llmguard", Description: "the engine: retries with backoff and server hints, breakers by scope, fallback over " + fmt.Sprint(len(route)) + " targets"}}
	ev := newEventLog(5)
	eo := &resilience.Options{Routes: map[string]resilience.Route{"default": demoRoute()}, Adapters: lgAd, Logger: logger}
	eo.Rand = rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x5eed))
	eo.OnEvent = func(e resilience.Event) {
		switch e.Kind {
		case resilience.EventAttempt:
			lg.attempts.Add(1)
		case resilience.EventRetry:
			lg.add(func(o *Outcome) { o.Retries++; o.Waited += e.Wait })
		case resilience.EventFallback:
			lg.add(func(o *Outcome) { o.Fallbacks++ })
		case resilience.EventSkip:
			lg.add(func(o *Outcome) { o.Skips++ })
		}
		ev.note(e)
	}
	eng, err := resilience.New(eo)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	// The two baselines talk to the primary only, through the same adapter code.
	naiveAd, err := adapters(worlds[1].url)
	if err != nil {
		return nil, err
	}
	plainAd, err := adapters(worlds[2].url)
	if err != nil {
		return nil, err
	}
	primaryProv, primaryModel, _ := catalog.SplitTarget(route[0])
	naive := &tally{o: Outcome{Client: "naive", Description: fmt.Sprintf("primary only; retries every error up to %d attempts with a fixed %v backoff", NaiveAttempts, NaiveBackoff)}}
	plain := &tally{o: Outcome{Client: "no-retry", Description: "primary only; one attempt per request"}}

	runLlmguard := func(ctx context.Context, i int) {
		res, err := eng.Chat(ctx, &resilience.Call{Route: "default", Request: prompt(i)})
		target := ""
		if err == nil {
			target = res.Target
		}
		lg.finish(target, err)
	}
	runBaseline := func(ctx context.Context, t *tally, a provider.Adapter, attempts int, i int) {
		req := prompt(i)
		req.Model = primaryModel
		var err error
		for k := 0; k < attempts; k++ {
			if k > 0 {
				t.add(func(o *Outcome) { o.Retries++; o.Waited += NaiveBackoff })
				if wait.For(ctx, NaiveBackoff) != nil {
					break
				}
			}
			t.attempts.Add(1)
			actx, cancel := context.WithTimeout(ctx, 20*time.Second)
			_, err = a.Chat(actx, req)
			cancel()
			if err == nil {
				break
			}
		}
		t.finish(route[0], err)
	}

	view := &liveView{opt: &opt, n: n, eng: eng, lg: lg, naive: naive, plain: plain, ev: ev, worlds: worlds[:1]}
	start := time.Now()
	for _, w := range worlds {
		w.start.Store(start.UnixNano())
	}
	stopView := view.run(start)

	var wg sync.WaitGroup
	gap := opt.Night / time.Duration(n)
	for i := 0; i < n; i++ {
		if err := wait.Until(ctx, start.Add(time.Duration(i)*gap)); err != nil {
			break
		}
		wg.Add(3)
		go func() { defer wg.Done(); runLlmguard(ctx, i) }()
		go func() { defer wg.Done(); runBaseline(ctx, naive, naiveAd[primaryProv], NaiveAttempts, i) }()
		go func() { defer wg.Done(); runBaseline(ctx, plain, plainAd[primaryProv], 1, i) }()
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopView()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	s := &Summary{Requests: n, Seed: opt.Seed, NightSeconds: opt.Night.Seconds(), ElapsedSeconds: round(elapsed.Seconds()),
		Script: append([]Phase(nil), night...), Targets: eng.Status()}
	for i, t := range []*tally{lg, naive, plain} {
		out := t.snapshot()
		out.MockAttempts = worlds[i].attempts()
		out.WaitedSeconds = round(out.Waited.Seconds())
		switch i {
		case 0:
			s.Llmguard = out
		case 1:
			s.Naive = out
		default:
			s.NoRetry = out
		}
	}
	sort.Slice(s.Targets, func(i, j int) bool { return order(s.Targets[i].Target) < order(s.Targets[j].Target) })
	return s, nil
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
