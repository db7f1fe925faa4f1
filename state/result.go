package state

import (
	"context"
	"time"
)

// ResultStore keeps the results of deduplicated calls by key (an
// idempotency key and its route) and the claims of the calls in flight on
// them, so that a duplicate arriving at another replica waits for the
// first call's result instead of calling the provider again. Results and
// claims expire after the TTL they were written with; the store may drop
// a result at any time (a bound reached, a restart): the caller then
// calls again. Values are not modified after Publish, by the store or the
// caller. Implementations are safe for concurrent use.
type ResultStore interface {
	// Claim claims key for ttl unless a result is stored there (returned,
	// claimed false) or another claim holds it (nil, false). claimed true:
	// the caller makes the call and must Publish its result or Release.
	Claim(ctx context.Context, key string, ttl time.Duration) (result []byte, claimed bool, err error)
	// Publish stores result at key for ttl and ends the key's claim.
	Publish(ctx context.Context, key string, result []byte, ttl time.Duration) error
	// Release ends the key's claim without a result (the call failed):
	// the duplicates waiting for it claim the key in turn.
	Release(ctx context.Context, key string) error
	// Result returns the result stored at key (nil when none) and whether
	// a claim is held on it.
	Result(ctx context.Context, key string) (result []byte, inFlight bool, err error)
}
