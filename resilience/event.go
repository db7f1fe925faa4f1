package resilience

import (
	"time"

	"github.com/llmguard/llmguard/classify"
)

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
	// EventContinue: a stream that broke after its first token continues
	// on Target (From: the target that broke; Verdict and Err: the break).
	EventContinue EventKind = "continue"
	// EventMalformed: a stream skipped Malformed events it could not
	// decode (invalid JSON in a data line); delivered when it ends.
	EventMalformed EventKind = "malformed"
	// EventHedgeWon: a hedge's branch answered before the attempt it
	// hedged (Target: the hedge's target, From: the hedged one, which is
	// cancelled). A hedged attempt that answers first emits none.
	EventHedgeWon EventKind = "hedge_won"
	// EventPace: an attempt on Target waits Wait for its turn under the
	// rate limit the target's answers announced (pacing), before it is
	// sent; delivered when the wait begins.
	EventPace EventKind = "pace"
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
	// Elapsed is how long the attempt took, on an attempt's success or
	// failure event (a stream's: until its first token); 0 on others.
	Elapsed time.Duration
	// From and To are a breaker event's states (closed, open, half_open);
	// on a fallback event From is the target fallen back from.
	From, To string
	Reason   string // why a target was skipped
	Err      error
	// Malformed is an EventMalformed's count of skipped events.
	Malformed int
}

// emit delivers ev, an event of call c on route rp, to the engine's hook,
// then the call's.
func (e *Engine) emit(rp *routePlan, c *Call, ev Event) {
	if e.onEvent == nil && c.OnEvent == nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	ev.Route = rp.name
	if e.onEvent != nil {
		e.onEvent(ev)
	}
	if c.OnEvent != nil {
		c.OnEvent(ev)
	}
}
