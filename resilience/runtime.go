package resilience

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/state"
)

// A target's runtime: what the engine keeps of each target between calls,
// shared by every route that lists it (concurrency limit, retry budget
// counters, statistics), bounded for targets a client invents, and the
// status page made of it.

// targetRuntime is the in-process state of one target shared by every route
// that uses it: concurrency limit, retry budget counters and statistics.
type targetRuntime struct {
	name  string
	sem   *semaphore.Weighted // nil = unlimited
	limit int                 // sem's size (0 = unlimited)

	active   atomic.Int64 // calls currently on this target
	retrying atomic.Int64 // retries currently in flight

	// inFlight counts attempts holding a slot (a stream's until it is
	// closed), queued the calls waiting for one; done gives a slot back.
	inFlight, queued atomic.Int64
	done             func()

	successes, failures, retries, fallbacks atomic.Int64

	// pace paces the target by the rate limits its answers announce (pace.go).
	pace pacer

	// wholeUntil (Unix ns): until then Chats to this target ask for the
	// answer whole, as a stream broke during an answer (see chatAttempt).
	wholeUntil atomic.Int64

	// speed is the pace of the target's recent answers to Chats: a Chat
	// whose answer cannot be long goes plain (see speed.go).
	speed answerSpeed

	// noPrefill: the target answered an assistant prefill with a 400; a
	// continuation there regenerates instead (see continue.go).
	noPrefill atomic.Bool

	// used is when a call was last planned on the target (Unix ns): an
	// invented target idle for inventedTTL is dropped.
	used atomic.Int64

	mu         sync.Mutex
	lastErr    string
	lastFailed time.Time
}

// runtime returns the shared runtime of a target, creating it on first use.
// The concurrency limit is per target, not per route: one semaphore per
// provider/model, shared by every route that lists it. For a target some
// configured route lists, the limit is the one New fixed (see targetLimits)
// and maxc is ignored; for a target only a call names (its Fallbacks, or a
// "provider/model" route) it is maxc (0 = unlimited), the limit of the
// route the first such call runs under, fixed then.
// A configured target's runtime is kept for the engine's life. Beyond
// maxRuntimes targets (clients may name arbitrary models), the runtimes of
// invented targets idle for inventedTTL are dropped, and a new target that
// still finds no room gets a runtime of its own, not shared or listed by
// Status.
func (e *Engine) runtime(name string, maxc int) *targetRuntime {
	l, configured := e.limits[name]
	if configured {
		maxc = l
	}
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	rt, ok := e.runtimes[name]
	if !ok {
		rt = &targetRuntime{name: name}
		rt.used.Store(now.UnixNano())
		rt.done = func() { rt.inFlight.Add(-1) }
		if e.shared {
			key := targetKey(name)
			rt.pace.share = func(fn func(b *state.Pace) bool) {
				_, _ = e.store.UpdateBreaker(storeCtx(), key, func(b *state.Breaker) bool { return fn(&b.Pace) })
			}
			rt.pace.later = e.paceLater(key)
		}
		if maxc > 0 {
			sem := semaphore.NewWeighted(int64(maxc))
			rt.sem, rt.limit = sem, maxc
			rt.done = func() { rt.inFlight.Add(-1); sem.Release(1) }
		}
		if !configured && len(e.runtimes) >= maxRuntimes {
			e.sweepLocked(now)
		}
		if configured || len(e.runtimes) < maxRuntimes {
			e.runtimes[name] = rt
		}
	}
	return rt
}

// sweepLocked drops the state of invented targets idle for inventedTTL:
// memoised plans and runtimes of targets no configured route lists and no
// call is on. It runs at most once a minute (a flood of new names does not
// rescan per name). The caller holds e.mu.
func (e *Engine) sweepLocked(now time.Time) {
	if now.Sub(e.lastSweep) < time.Minute {
		return
	}
	e.lastSweep = now
	old := now.Add(-inventedTTL).UnixNano()
	for k, m := range e.dynamic {
		if m.used.Load() < old {
			delete(e.dynamic, k)
		}
	}
	for name, rt := range e.runtimes {
		if _, configured := e.limits[name]; !configured && rt.active.Load() == 0 && rt.used.Load() < old {
			delete(e.runtimes, name)
		}
	}
}

// TargetStatus is a snapshot of one target for status pages; counters are
// since the Engine was created.
type TargetStatus struct {
	Target    string    `json:"target"`
	Breaker   string    `json:"breaker"` // closed, open, half_open
	OpenUntil time.Time `json:"open_until,omitzero"`
	Successes int64     `json:"successes"`
	Failures  int64     `json:"failures"`
	Retries   int64     `json:"retries"`
	Fallbacks int64     `json:"fallbacks"`
	// InFlight counts the upstream attempts running now (a stream until
	// it is closed); Queued the calls waiting for a concurrency slot.
	InFlight   int64     `json:"in_flight"`
	Queued     int64     `json:"queued"`
	LastError  string    `json:"last_error,omitempty"`
	LastFailed time.Time `json:"last_failed,omitzero"`
}

// Status returns a snapshot of every target the engine knows, sorted by name.
// A target whose provider key is open reports the key's breaker.
func (e *Engine) Status() []TargetStatus {
	e.mu.Lock()
	rts := make([]*targetRuntime, 0, len(e.runtimes))
	for _, rt := range e.runtimes {
		rts = append(rts, rt)
	}
	e.mu.Unlock()
	sort.Slice(rts, func(i, j int) bool { return rts[i].name < rts[j].name })
	ctx := context.Background()
	out := make([]TargetStatus, 0, len(rts))
	for _, rt := range rts {
		ts := TargetStatus{
			Target:    rt.name,
			Breaker:   state.Closed,
			Successes: rt.successes.Load(),
			Failures:  rt.failures.Load(),
			Retries:   rt.retries.Load(),
			Fallbacks: rt.fallbacks.Load(),
			InFlight:  rt.inFlight.Load(),
			Queued:    rt.queued.Load(),
		}
		b, err := e.store.Breaker(ctx, targetKey(rt.name))
		if err == nil {
			ts.Breaker = breakerState(&b)
			if ts.Breaker == state.Open {
				ts.OpenUntil = b.OpenUntil
			}
		}
		prov, _, _ := catalog.SplitTarget(rt.name)
		if kb, err := e.store.Breaker(ctx, keyKey(prov)); err == nil && breakerState(&kb) != state.Closed && ts.Breaker == state.Closed {
			ts.Breaker = breakerState(&kb)
			if ts.Breaker == state.Open {
				ts.OpenUntil = kb.OpenUntil
			}
		}
		rt.mu.Lock()
		ts.LastError, ts.LastFailed = rt.lastErr, rt.lastFailed
		rt.mu.Unlock()
		out = append(out, ts)
	}
	return out
}

func targetKey(name string) string { return "target/" + name }
func keyKey(prov string) string    { return "key/" + prov }
