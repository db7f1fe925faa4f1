package batch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// Engine is what a run needs of a *resilience.Engine. Implementations must
// be safe for concurrent use.
type Engine interface {
	Chat(ctx context.Context, c *resilience.Call) (*resilience.Result, error)
}

// Defaults of the zero Config fields.
const (
	DefaultConcurrency = 8
	DefaultMaxTokens   = 1024
	DefaultItemRetries = 5
)

// Config configures a run. A nil *Config, and every zero field, means the
// documented default.
type Config struct {
	// Route is where every item goes. "" sends each item where its line
	// says (the body's "model" in the OpenAI and Anthropic formats, "route"
	// or else "model" in llmguard's), and a line that names none to
	// "default". A bare model id no route serves is, in an OpenAI or an
	// Anthropic batch file, that provider's model ("gpt-4o-mini" is
	// "openai/gpt-4o-mini").
	Route string
	// Resolve maps a route name, "provider/model" or bare model id to the
	// engine's route, as catalog.Catalog.ResolveModel does; its error stops
	// the run before anything is sent (a *ResolveError). Nil passes names
	// through unchanged.
	Resolve func(name string) (string, error)
	// Concurrency is how many items are in flight at once (0 =
	// DefaultConcurrency). The engine's own limits (a target's
	// max_concurrency) still apply under it.
	Concurrency int
	// Template renders the prompt of an item given as "text", with
	// text/template over a TemplateData ("" = DefaultTemplate). Items given
	// as "prompt" or "messages", and the OpenAI and Anthropic formats, are
	// sent as they are.
	Template string
	// MaxTokens is the answer budget of an item in llmguard's format that
	// gives none (0 = DefaultMaxTokens).
	MaxTokens int
	// MaxCost is a spend ceiling in US dollars (0 = none): no item is sent
	// once what was spent (answers and wasted attempts) plus an estimate
	// of what is in flight would pass it; the run then stops and the rest
	// stays to do. An answer dearer than its estimate may pass the ceiling
	// by the difference.
	MaxCost float64
	// Estimate is an item's expected cost before it is sent (nil: the mean
	// cost of the answers so far, and one item at a time until the first
	// answer). Used only with MaxCost.
	Estimate func(req *provider.Request) float64
	// RetryFailed sends again the items a results file records as failed.
	RetryFailed bool
	// NoWaitPast stops the run, instead of pausing it, when every target
	// refuses until a known time further away than this (a per-day quota's
	// reset, a long rate limit); 0 = pause as long as it takes.
	NoWaitPast time.Duration
	// ItemRetries is how many times an item failing for a passing reason
	// while other items are answered goes back in the queue before it is
	// recorded as failed (0 = DefaultItemRetries): the targets work, so
	// the fault is the item's (an answer that never ends in time). Failures
	// while no item is answered pause the run instead and never count.
	ItemRetries int
	// Codec reads the OpenAI and Anthropic formats and writes their results
	// (gateway.Codec{}); nil: an input in either, or with "messages" items,
	// is refused before the run starts.
	Codec Codec
	// OnEvent receives the run's events (nil = none). It is called from
	// several goroutines and must not block.
	OnEvent func(Event)
}

func (c *Config) withDefaults() Config {
	d := defaults.Copy(c)
	defaults.Positive(&d.Concurrency, DefaultConcurrency)
	defaults.Positive(&d.MaxTokens, DefaultMaxTokens)
	defaults.Positive(&d.ItemRetries, DefaultItemRetries)
	return d
}

// ResolveError is a line naming a model no route serves (or Config.Route
// itself, Line 0), found before the run starts.
type ResolveError struct {
	Input string
	Line  int
	Model string
	Err   error
}

func (e *ResolveError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("route %q: %v", e.Model, e.Err)
	}
	return fmt.Sprintf("%s:%d: model %q: %v", e.Input, e.Line, e.Model, e.Err)
}

func (e *ResolveError) Unwrap() error { return e.Err }

// Runner runs one batch. Create it with New; Run it once. Stop and
// Progress are safe to call from other goroutines while it runs.
type Runner struct {
	eng    Engine
	cfg    Config
	tmpl   *template.Template
	fields bool // the template reads .Fields

	in      *Input
	out     *results
	skipped int               // input items the results file already holds
	routes  map[string]string // a line's model → the engine's route
	route   string            // Config.Route resolved
	start   time.Time
	stopCh  chan struct{}
	once    sync.Once
	wake    chan struct{} // something changed: the dispatcher looks again
	writes  chan *pending
	wg      sync.WaitGroup

	answered atomic.Int64 // successes returned by the engine, on disk or not

	mu     sync.Mutex
	st     state
	warned map[string]bool // targets warned about for their key
}

// New returns a Runner over eng. It fails when cfg's template does not parse.
func New(eng Engine, cfg *Config) (*Runner, error) {
	if eng == nil {
		return nil, errors.New("batch: no engine")
	}
	c := cfg.withDefaults()
	tmpl, fields, err := parseTemplate(c.Template)
	if err != nil {
		return nil, fmt.Errorf("prompt template: %w", err)
	}
	return &Runner{eng: eng, cfg: c, tmpl: tmpl, fields: fields, stopCh: make(chan struct{}),
		wake: make(chan struct{}, 1), warned: map[string]bool{}}, nil
}

// Stop makes the run take no new item; Run returns once the items in
// flight have ended (cancel Run's context to abort them).
func (r *Runner) Stop() {
	r.stop("interrupted")
}

// EventKind names an event of a run.
type EventKind string

// Event kinds.
const (
	// EventItem: an item's record is on disk (Record).
	EventItem EventKind = "item"
	// EventPause: every target refuses; no item is sent until Until (zero
	// when unknown), then one, to see whether they are back (Reason).
	EventPause EventKind = "pause"
	// EventResume: a target answers again; the run goes on at full speed.
	EventResume EventKind = "resume"
	// EventStop: the run takes no more items (Reason).
	EventStop EventKind = "stop"
	// EventWarn: a target fails for its key or account while the route's
	// other targets serve (Reason, once per target).
	EventWarn EventKind = "warn"
)

// Event is one thing that happened in a run, with the progress after it.
type Event struct {
	Kind     EventKind
	Time     time.Time
	Record   *Record
	Reason   string
	Until    time.Time
	Progress Progress
}

// Progress is a snapshot of a run.
type Progress struct {
	// Total counts the input's items; Skipped those an earlier run did.
	Total, Skipped int
	// Served and Failed count this run's records on disk; Canceled the
	// items aborted in flight (to do again).
	Served, Failed, Canceled int
	// InFlight counts items sent and not yet ended.
	InFlight int
	// Paused: every target refuses (Reason); Until is when the run tries
	// again, zero when unknown.
	Paused bool
	Reason string
	Until  time.Time
	// CostUSD is what this run's answers cost.
	CostUSD float64
	// Elapsed is the run's time so far; Rate its records per second.
	Elapsed time.Duration
	Rate    float64
}

// Left counts the items still to do.
func (p Progress) Left() int { return p.Total - p.Skipped - p.Served - p.Failed }

// ETA is the expected time to the end at the current rate (0 = unknown).
func (p Progress) ETA() time.Duration {
	if p.Rate <= 0 {
		return 0
	}
	return time.Duration(float64(p.Left()) / p.Rate * float64(time.Second))
}

// Summary is how a run ended.
type Summary struct {
	Progress
	// Out is the results file; Format its (and the input's) format.
	Out    string
	Format Format
	// FailedByClass counts this run's failed records by class.
	FailedByClass map[string]int
	// Attempts counts upstream attempts; WastedAttempts those that gave no
	// recorded answer (retries, fallbacks, calls that failed).
	Attempts, WastedAttempts int
	// WastedCostUSD is what the run paid for and did not keep: the failed
	// attempts the provider billed (resilience.Result.Wasted and
	// RouteError.Wasted: answered, then failed; a 429 or 529 costs
	// nothing), and answers whose record could not be written (they are to
	// do again).
	WastedCostUSD float64
	// Stopped is why the run ended with items left to do, one line ("" when
	// every item has a record). A later run with the same results file
	// resumes them.
	Stopped string
}
