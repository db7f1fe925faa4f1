package resilience

import (
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state"
)

// Options configures an Engine; every zero field means the documented
// default. config.Config.EngineOptions fills Routes and Catalog from a
// configuration file.
type Options struct {
	// Routes maps a route name to its targets and policies. Route
	// "default" serves calls that name no route, and lends its policies
	// to calls that name a "provider/model" (no "default": the defaults).
	Routes map[string]Route
	// Adapters maps a provider name (a target's part before the slash) to
	// its adapter.
	Adapters map[string]provider.Adapter
	// Catalog says what is known of each provider's models (price,
	// context window, prefill, vector size) and where a call whose Route
	// is a bare model name goes (its DefaultProvider; "" = such a call
	// fails with ErrUnknownRoute). nil is the built-in table alone.
	Catalog *catalog.Catalog
	// Rand is the jitter source (nil = a randomly seeded one).
	Rand *rand.Rand
	// OnEvent receives every event of every call (nil = none). It must not
	// block, and it is called concurrently (by concurrent calls, and by the
	// two branches of a hedge).
	OnEvent func(Event)
	// Logger (nil = slog.Default()).
	Logger *slog.Logger
	// Store holds circuit-breaker state (nil = a new in-memory store).
	// Engines sharing a Store share breakers.
	Store state.Store
}

// Call is one logical call. The engine only reads it (the Request is copied
// before the model is set per target), so a Call may be reused once the call
// returns. The zero Route means "default".
type Call struct {
	// Route is a route name, or a "provider/model" target that runs under the
	// default route's policies.
	Route   string
	Request *provider.Request
	// Fallbacks are targets appended to the route for this call only, in
	// the order given, after the route's own targets (which order: cost
	// sorts; a call's Fallbacks are never sorted).
	Fallbacks []string
	// Timeout overrides the route's deadline when > 0.
	Timeout time.Duration
	// IdempotencyKey makes concurrent and repeated identical calls run once:
	// duplicates share the first call's flight, and later ones get its stored
	// success until the route's cache TTL (10 minutes when the route does
	// not cache). Stream replays a stored success (of a Chat, or
	// of a stream that ended properly) as a stream and stores its own;
	// concurrent duplicate streams are not single-flighted (each runs).
	IdempotencyKey string
	// RepeatScope, when not empty, lets the engine answer this call with
	// the held failure of an identical call in the same scope (same route,
	// Fallbacks and Request) that the engine retried to exhaustion moments
	// before, without an upstream attempt: a RouteError wrapping ErrRepeat
	// (see repeat.go and the route's RepeatHold). The scope says who asks
	// (the gateway key a request presented); it is hashed with the request,
	// never stored or logged. "": the call is never held.
	RepeatScope string
	// OnEvent receives this call's events (e.g. for MCP progress), after Options.OnEvent.
	OnEvent func(Event)
}

// Result is a successful call. It is the caller's to keep; a cached result
// is a copy.
type Result struct {
	Response *provider.Response
	// Target is the "provider/model" that answered.
	Target string
	// Attempts counts upstream attempts across the route.
	Attempts int
	// Fallbacks counts moves to a next target.
	Fallbacks int
	// Waited is the total time spent in backoff.
	Waited time.Duration
	// Cached: served from the idempotency cache. Static: a labelled canned answer.
	Cached, Static bool
	// Cost in dollars of the answering call, from the pricing table.
	Cost float64
}

// StreamResult is a stream that has delivered its first token. The caller
// must Close Stream; until then it holds the target's concurrency slot.
type StreamResult struct {
	// Stream yields the chunks, the first one included; idle timeouts apply.
	Stream    provider.Stream
	Target    string
	Attempts  int
	Fallbacks int
	Waited    time.Duration
	// Cached: Stream replays a stored answer (see Call.IdempotencyKey);
	// no upstream call was made.
	Cached bool
	// Static: Stream is the route's labelled canned answer (Target "static").
	Static bool
}

// EventKind names an event.
type EventKind string

// Event kinds.
const (
	EventAttempt  EventKind = "attempt"  // an upstream attempt starts
	EventFailure  EventKind = "failure"  // an attempt failed (Verdict set)
	EventRetry    EventKind = "retry"    // a retry is scheduled after Wait
	EventFallback EventKind = "fallback" // moving from From to Target (Verdict: From's failure)
	EventSkip     EventKind = "skip"     // a target was skipped (breaker open, cooldown, budget)
	EventBreaker  EventKind = "breaker"  // a breaker changed state (From, To)
	EventSuccess  EventKind = "success"  // the call succeeded
	EventGiveUp   EventKind = "give_up"  // the call failed (Err set)
)

// Event is one thing that happened during a call. Route is the route's
// name. Verdict is set on failure, retry and (from the failure that caused
// it) fallback events. A fallback event's Target is the target the call
// moves to and From the one it leaves, whose last failure its Verdict is (a
// hedge's fallback has no Verdict, and a Reason instead). Reason says why a
// target was skipped; on a breaker event it is "key <provider>" when the
// provider key's breaker changed (every target on that key is affected) and
// "" for the target's own breaker. A breaker event caused by a stream
// failing after its first token is only delivered to Options.OnEvent (the
// call has returned by then); it still names the route.
type Event struct {
	Kind        EventKind
	Time        time.Time
	Route       string
	Target      string
	Attempt     int // attempt number on this target, from 1
	MaxAttempts int
	Verdict     *classify.Verdict
	Wait        time.Duration
	// From and To are a breaker event's states (closed, open, half_open);
	// on a fallback event From is the target fallen back from.
	From, To string
	Reason   string // why a target was skipped
	Err      error
}

// TargetStatus is a snapshot of one target for status pages; counters are
// since the Engine was created.
type TargetStatus struct {
	Target     string    `json:"target"`
	Breaker    string    `json:"breaker"` // closed, open, half_open
	OpenUntil  time.Time `json:"open_until,omitzero"`
	Successes  int64     `json:"successes"`
	Failures   int64     `json:"failures"`
	Retries    int64     `json:"retries"`
	Fallbacks  int64     `json:"fallbacks"`
	LastError  string    `json:"last_error,omitempty"`
	LastFailed time.Time `json:"last_failed,omitzero"`
}

// Sentinel errors; a failed call returns a *RouteError that wraps one of them
// and every attempt's *provider.Error.
var (
	ErrUnknownRoute = errors.New("unknown route")
	ErrNoTarget     = errors.New("no target available")
	ErrExhausted    = errors.New("every target failed")
	ErrDeadline     = errors.New("deadline exceeded")
	// ErrRejected: the last failure forbids trying another target
	// (invalid_request, or a failure no eligible target can serve).
	ErrRejected = errors.New("request rejected")
)
