package chaos

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/internal/wait"
	"github.com/llmguard/llmguard/provider"
)

// Defaults for Options fields left zero.
const (
	DefaultSeed     = 1
	DefaultRequests = 1000
	DefaultWindow   = 4 * time.Second
	DefaultParallel = 1
)

// Options configures Run. The zero value (and nil) runs the whole
// scorecard with the defaults.
type Options struct {
	// Seed seeds the mocks' faults and every strategy's jitter (0 = DefaultSeed).
	Seed uint64
	// Requests is how many requests each strategy sends in each scenario
	// (0 = DefaultRequests).
	Requests int
	// Window is the time over which a scenario's requests arrive, evenly
	// spaced (0 = DefaultWindow).
	Window time.Duration
	// Scenarios names the scenarios to run, in scorecard order whatever
	// their order here (nil = all; an unknown name is an error).
	Scenarios []string
	// Parallel is how many scenarios run at once (0 = DefaultParallel).
	Parallel int
	// Progress receives a line per scenario done (nil = none).
	Progress io.Writer
}

// Cell is what one strategy got in one scenario.
type Cell struct {
	Scenario string `json:"scenario"`
	Strategy string `json:"strategy"`
	Requests int    `json:"requests"`
	// Full answers are whole and right; Errors ended before any text
	// reached the caller (a clean error); Truncated gave the caller text
	// that is not the full answer (cut short or garbled).
	Full      int `json:"full"`
	Errors    int `json:"errors"`
	Truncated int `json:"truncated"`
	// Success is Full / Requests.
	Success float64 `json:"success"`
	// Attempts are the generation requests the mocks logged.
	Attempts           int     `json:"attempts"`
	AttemptsPerRequest float64 `json:"attempts_per_request"`
	// Hopeless counts attempts answered with an error that could never
	// succeed (a bad key, no credit, a spent daily quota, a rejected
	// request) that the client sent after the same target had already
	// answered it with one: the first answers are how a client learns,
	// what it sends once told is waste.
	Hopeless int `json:"hopeless_attempts"`
	// WaitSeconds is the mean time per request with no attempt on the
	// wire: backoff, holds, queues.
	WaitSeconds float64 `json:"wait_seconds"`
	// P50 and P99 are the times to a full answer, in seconds, a request
	// without one counting as never (-1: never).
	P50 float64 `json:"p50_seconds"`
	P99 float64 `json:"p99_seconds"`
	// CostUSD is what the provider bills at list prices: the prompt and
	// the streamed tokens of every attempt answered 2xx. WastedUSD is the
	// part of it billed by attempts that did not end properly (broken,
	// cancelled, a hedge's loser).
	CostUSD   float64 `json:"cost_usd"`
	WastedUSD float64 `json:"wasted_usd"`
	// Metered is the attempts the strategy made as its adapters saw them
	// (equal to Attempts when the mock logged every one).
	Metered int `json:"metered_attempts"`
	// Open counts streams the strategy left open after its requests
	// returned and a grace period (a leak: 0 is right).
	Open int `json:"open_streams"`
	// Failures counts the requests without a full answer by what they
	// got: the last failure's class, "deadline", "wrong answer", ….
	Failures map[string]int `json:"failures,omitempty"`
}

// Scorecard is the result of Run.
type Scorecard struct {
	Seed           uint64     `json:"seed"`
	Requests       int        `json:"requests"`
	WindowSeconds  float64    `json:"window_seconds"`
	ElapsedSeconds float64    `json:"elapsed_seconds"`
	Machine        string     `json:"machine"`
	Scenarios      []Scenario `json:"scenarios"`
	Strategies     []Strategy `json:"strategies"`
	// Cells are scenario by scenario, strategies in order.
	Cells []Cell `json:"cells"`
	// Findings are the cells where llmguard misses a target or does
	// worse than a baseline.
	Findings []Finding `json:"findings"`
}

// Cell returns the cell of scenario and strategy (nil when not run).
func (s *Scorecard) Cell(scenario, strategy string) *Cell {
	for i := range s.Cells {
		if c := &s.Cells[i]; c.Scenario == scenario && c.Strategy == strategy {
			return c
		}
	}
	return nil
}

// Run plays every scenario for every strategy, each strategy against its
// own fresh mocks on 127.0.0.1, and returns the scorecard. Run is safe to
// call concurrently.
func Run(ctx context.Context, o *Options) (*Scorecard, error) {
	opt := o.withDefaults()
	scs, err := pick(opt.Scenarios)
	if err != nil {
		return nil, err
	}
	want, err := answers()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	cells := make([][]Cell, len(scs))
	errs := make([]error, len(scs))
	jobs := make(chan int, len(scs))
	for i := range scs {
		jobs <- i
	}
	close(jobs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range min(opt.Parallel, len(scs)) {
		wg.Go(func() {
			for i := range jobs {
				if ctx.Err() != nil {
					return
				}
				cells[i], errs[i] = runScenario(ctx, &scs[i], &opt, want)
				if opt.Progress != nil && errs[i] == nil {
					mu.Lock()
					fmt.Fprintf(opt.Progress, "bench chaos: %-18s %s\n", scs[i].Name, progressLine(cells[i]))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sc := &Scorecard{Seed: opt.Seed, Requests: opt.Requests, WindowSeconds: opt.Window.Seconds(),
		Machine:   machine(),
		Scenarios: scs, Strategies: Strategies()}
	for i, err := range errs {
		if err != nil {
			return nil, err
		}
		sc.Cells = append(sc.Cells, cells[i]...)
	}
	sc.ElapsedSeconds = round(time.Since(start).Seconds(), 1)
	sc.Findings = findings(sc)
	return sc, nil
}

// machine says what the scorecard ran on: OS, cores, Go, and the load
// average when the run started where the system says it (Linux), since
// the timings depend on what else the cores were doing.
func machine() string {
	m := fmt.Sprintf("%s/%s, %d cores, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			m += ", load average " + f[0] + " at the start"
		}
	}
	return m
}

func progressLine(cells []Cell) string {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteString(" · ")
		}
		fmt.Fprintf(&b, "%s %.1f%%", c.Strategy, 100*c.Success)
	}
	return b.String()
}

func (o *Options) withDefaults() Options {
	opt := defaults.Copy(o)
	opt.Seed = cmp.Or(opt.Seed, DefaultSeed)
	defaults.Positive(&opt.Requests, DefaultRequests)
	defaults.Positive(&opt.Window, DefaultWindow)
	defaults.Positive(&opt.Parallel, DefaultParallel)
	return opt
}

// pick returns the named scenarios in scorecard order (all for none).
func pick(names []string) ([]Scenario, error) {
	if len(names) == 0 {
		return Scenarios(), nil
	}
	var out []Scenario
	for _, n := range names {
		found := false
		for _, s := range scenarios {
			found = found || s.Name == n
		}
		if !found {
			all := make([]string, len(scenarios))
			for i, s := range scenarios {
				all[i] = s.Name
			}
			return nil, fmt.Errorf("bench chaos: unknown scenario %q (want one of %s)", n, strings.Join(all, ", "))
		}
	}
	for _, s := range scenarios {
		for _, n := range names {
			if s.Name == n {
				out = append(out, s)
				break
			}
		}
	}
	return out, nil
}

// runScenario plays sc for every strategy at once and returns their cells.
func runScenario(ctx context.Context, sc *Scenario, opt *Options, want []string) ([]Cell, error) {
	rigs := make([]*rig, 0, len(strategies))
	defer func() {
		for _, r := range rigs {
			r.close()
		}
	}()
	for i := range strategies {
		r, err := newRig(sc, &strategies[i], opt)
		if err != nil {
			return nil, err
		}
		rigs = append(rigs, r)
	}
	start := time.Now()
	for _, r := range rigs {
		r.reset()
	}
	gap := opt.Window / time.Duration(opt.Requests)
	var wg sync.WaitGroup
	for i := 0; i < opt.Requests; i++ {
		if err := wait.Until(ctx, start.Add(time.Duration(i)*gap)); err != nil {
			break
		}
		for _, r := range rigs {
			wg.Go(func() { r.do(ctx, i, want[i%len(want)]) })
		}
	}
	wg.Wait()
	cells := make([]Cell, len(rigs))
	for i, r := range rigs {
		cells[i] = r.cell()
	}
	return cells, nil
}

// prompts are the requests' prompts, taken in turn.
var prompts = []string{
	"summarise ticket #%d for the on-call engineer",
	"summarise the incident timeline of request %d",
	"summarise what changed in deploy %d and why",
	"summarise the customer's email in thread %d",
}

// prompt is request i.
func prompt(i int) *provider.Request {
	return &provider.Request{MaxTokens: 64, Stream: true, Messages: []provider.Message{{Role: provider.RoleUser,
		Content: []provider.Part{{Type: provider.PartText, Text: fmt.Sprintf(prompts[i%len(prompts)], i%len(prompts)+1)}}}}}
}

func round(f float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(f*p+0.5)) / p
}
