package mcpcall

import (
	"context"
	"time"

	"github.com/llmguard/llmguard/internal/wait"
)

// Claims is what a Store that replicas share adds so that a flight on one
// replica waits for the same key's flight on another instead of running
// the call again (a state.ResultStore's claims). A Group whose Store
// implements it claims the key before it runs a call: its Set then
// publishes the result and ends the claim, and a failure, or a result not
// kept, releases it. While another replica holds the claim the flight
// waits for that replica's result, until the flight's deadline, and claims
// in turn when the claim ends without one. A Claims error runs the call
// unclaimed, as a Store error does.
type Claims[V any] interface {
	// Claim claims key for ttl unless a result is stored there (returned,
	// stored true) or another claim holds it (both false).
	Claim(ctx context.Context, key string, ttl time.Duration) (v V, stored, claimed bool, err error)
	// Peek returns the result stored at key (stored true) and whether a
	// claim is held on it.
	Peek(ctx context.Context, key string) (v V, stored, inFlight bool, err error)
	// Release ends key's claim without a result.
	Release(ctx context.Context, key string) error
}

// ClaimPoll is how often a flight asks the shared store for the result of
// the call another replica is making.
const ClaimPoll = 20 * time.Millisecond

// defaultClaimTTL is a claim's lifetime when the flight has no deadline.
const defaultClaimTTL = DefaultTTL

// await claims key in c, or waits while another replica's claim holds it:
// stored true with that replica's result, claimed true when this flight
// is to run the call and publish or release; neither (and err nil) when
// the store failed and the call runs unclaimed. err is ctx's when the
// flight's deadline came first.
func (g *Group[V, E]) await(ctx context.Context, c Claims[V], key string) (v V, stored, claimed bool, err error) {
	ttl := defaultClaimTTL
	if dl, ok := ctx.Deadline(); ok {
		ttl = time.Until(dl) + time.Second // the claim outlives the flight
	}
	var zero V
	for {
		v, stored, claimed, err := c.Claim(ctx, key, ttl)
		if err != nil {
			g.log.Warn("mcp call claim failed; the call runs unshared", "error", err)
			return zero, false, false, nil
		}
		if stored || claimed {
			return v, stored, claimed, nil
		}
		for inFlight := true; inFlight; {
			if err := wait.For(ctx, ClaimPoll); err != nil {
				return zero, false, false, err
			}
			v, stored, inFlight, err = c.Peek(ctx, key)
			if err != nil {
				g.log.Warn("mcp call claim unreadable; the call runs unshared", "error", err)
				return zero, false, false, nil
			}
			if stored {
				return v, true, false, nil
			}
		}
		// The claim ended without a result: claim the key in turn.
	}
}
