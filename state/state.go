package state

import (
	"context"
	"time"
)

// Breaker states as stored in a Breaker record. The empty string means closed.
const (
	Closed   = "closed"
	Open     = "open"
	HalfOpen = "half_open"
)

// Breaker is the stored state of one circuit breaker (one target, or one
// provider key). It is plain data: the transitions are pure functions in
// package resilience that take it and an explicit time. The zero value is a
// closed breaker with no history.
type Breaker struct {
	// State is Closed (or ""), Open or HalfOpen.
	State string `json:"state,omitempty"`
	// WindowStart begins the current bucket of the sliding window (each
	// bucket is one window long). WindowCalls counts the outcomes reported
	// in it, WindowFailures those that were ill health and
	// WindowRateLimited the rate limits; the Prev fields hold the bucket
	// before. The window's counts at a moment are the current bucket's plus
	// the previous bucket's weighted by the share of it still inside the window.
	WindowStart       time.Time `json:"window_start,omitzero"`
	WindowCalls       int       `json:"window_calls,omitempty"`
	WindowFailures    int       `json:"window_failures,omitempty"`
	WindowRateLimited int       `json:"window_rate_limited,omitempty"`
	PrevCalls         int       `json:"prev_calls,omitempty"`
	PrevFailures      int       `json:"prev_failures,omitempty"`
	PrevRateLimited   int       `json:"prev_rate_limited,omitempty"`
	// OpenUntil is when an open breaker becomes half-open.
	OpenUntil time.Time `json:"open_until,omitzero"`
	// Trips counts the openings since the breaker last closed; each one
	// doubles the cooldown.
	Trips int `json:"trips,omitempty"`
	// Probes counts half-open probe calls admitted and not yet reported;
	// Asked counts the calls that asked to go through while half-open
	// (probes are admitted in proportion to them) and ProbeFailures the
	// probes that failed.
	Probes        int `json:"probes,omitempty"`
	Asked         int `json:"asked,omitempty"`
	ProbeFailures int `json:"probe_failures,omitempty"`
	// CooldownUntil is a rate-limit cooldown for every caller: the target
	// is skipped until then without the breaker counting it as ill health,
	// except for one call per interval, the next at PaceAt.
	CooldownUntil time.Time `json:"cooldown_until,omitzero"`
	PaceAt        time.Time `json:"pace_at,omitzero"`
	// WaitUntil is the longest wait a server asked a rate-limited call to
	// keep off the target (its retry-after, a reset), written by the
	// engine whose call got it (WaitBy names it): another engine sharing
	// the store prefers the route's other targets until then. It only
	// ever moves later.
	WaitUntil time.Time `json:"wait_until,omitzero"`
	WaitBy    string    `json:"wait_by,omitempty"`
	// Generation increases on every state change, so a late report from a
	// call admitted under an older state can be recognised.
	Generation uint64 `json:"generation,omitempty"`
	// Reason is the last failure that changed the state (one redacted line).
	Reason string `json:"reason,omitempty"`
	// Pace is the target's pacing bucket, set by the rate limits its
	// answers announce (every engine sharing the store paces by it).
	Pace Pace `json:"pace,omitzero"`
	// Facts are what engines learned of the target at run time.
	Facts Facts `json:"facts,omitzero"`
	// Fault is the failure that opened the breaker when it blames the key
	// or account itself (an invalid key, no credit, billing): while the
	// breaker refuses calls, callers are told this failure rather than an
	// outage. The zero Fault means the opening was for ill health.
	Fault Fault `json:"fault,omitzero"`
}

// Pace is a token bucket of requests set by what a target's answers
// announce of the caller's rate limits (x-ratelimit-*,
// anthropic-ratelimit-*): plain data, so engines sharing a store pace by
// one bucket. The zero value knows nothing and lets every call through.
type Pace struct {
	// Known: an announcement is in force.
	Known bool `json:"known,omitempty"`
	// Tokens are the requests that may start at At, less those reserved
	// by calls waiting for their turn (negative while calls wait).
	Tokens float64   `json:"tokens,omitempty"`
	At     time.Time `json:"at,omitzero"`
	// Size is the bucket (the announced limit, else the most announced
	// left), Rate the requests regained per second (0: a default).
	Size float64 `json:"size,omitempty"`
	Rate float64 `json:"rate,omitempty"`
	// Used is the requests used (the limit less those left) of the
	// announcement Rate was measured from.
	Used int `json:"used,omitempty"`
	// Full is when the announced limit is whole again (zero: unknown).
	Full time.Time `json:"full,omitzero"`
	// Spent: the announced token limit is used up until then.
	Spent time.Time `json:"spent,omitzero"`
	// Turn is the latest turn granted to a call that waits for it: until
	// then calls wait on the bucket, and it is not whole again at Full.
	Turn time.Time `json:"turn,omitzero"`
}

// Facts are what an engine learned of a target from its answers, kept in
// the target's record so that the engines sharing a store do not each
// make the failing call again to learn it.
type Facts struct {
	// NoPrefill: the target answered an assistant prefill with a 400, so
	// a continuation there regenerates instead.
	NoPrefill bool `json:"no_prefill,omitempty"`
	// WholeUntil: a stream broke during an answer, so until then Chats to
	// the target ask for the answer whole.
	WholeUntil time.Time `json:"whole_until,omitzero"`
}

// Fault is a terminal provider failure as a Breaker record keeps it: plain
// data, so it survives a shared store. The zero value is no fault.
type Fault struct {
	// Status is the provider's HTTP status (0 for an error inside a 200 stream).
	Status int `json:"status,omitempty"`
	// Class is the classifier's class ("auth", "quota_exhausted", ...).
	Class string `json:"class,omitempty"`
	// ProviderType is the provider's own error type or code.
	ProviderType string `json:"provider_type,omitempty"`
	// RequestID is the provider's request id of the failed call.
	RequestID string `json:"request_id,omitempty"`
	// Message is the verdict's one redacted line.
	Message string `json:"message,omitempty"`
	// Since is when the failure was first seen.
	Since time.Time `json:"since,omitzero"`
	// Until is when the provider said it ends (a quota reset); zero when unknown.
	Until time.Time `json:"until,omitzero"`
}

// Store holds breaker records by key. Implementations must make UpdateBreaker
// atomic per key and must never hold a lock while the caller talks to an
// upstream: fn runs inside the update and is pure and fast. Implementations
// are safe for concurrent use.
type Store interface {
	// Breaker returns the record at key, or the zero Breaker when none.
	Breaker(ctx context.Context, key string) (Breaker, error)
	// UpdateBreaker atomically reads the record at key (the zero Breaker when
	// none), calls fn with a copy and, when fn returns true, stores the
	// modified copy. It returns the record as it stands afterwards. fn may be
	// called more than once by optimistic backends, so it must not have side
	// effects beyond its argument.
	UpdateBreaker(ctx context.Context, key string, fn func(b *Breaker) bool) (Breaker, error)
}
