package resilience

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/llmguard/llmguard/internal/wait"
)

// Shared concurrency caps: with Options.Leases, a target's max_concurrency
// holds across the engines sharing that store (replicas), not only in
// each. A call first takes a slot of its engine's semaphore (so an engine
// never asks for more than the cap), then a lease on one of the target's
// slots in the store, asking again with growing pauses while all are
// taken, within the same queue_timeout. A lease lives leaseTTL unless
// renewed; its engine renews it every leaseTTL/3 while the attempt (a
// stream until it is closed) holds it, so the leases of a replica that died
// free their slots within leaseTTL.

// leaseTTL is how long a lease outlives its last renewal.
const leaseTTL = 15 * time.Second

// The pauses between asks for a shared slot: full jitter below a ceiling
// that doubles from leasePollMin to leasePollMax.
const (
	leasePollMin = 5 * time.Millisecond
	leasePollMax = 100 * time.Millisecond
)

func leaseKey(target string) string { return "lease/" + target }

// sharedSlot takes a lease on one of t's slots in the engine's lease
// store, asking until it gets one or deadline has passed. It returns the
// function that gives the lease back, or false. A store that fails (not
// the caller's context) grants the slot: the engine's own cap still holds,
// and no call fails for its state store.
func (cs *callState) sharedSlot(ctx context.Context, t *targetPlan, deadline time.Time) (func(), bool) {
	e := cs.e
	key := leaseKey(t.name)
	id := e.id + ":" + strconv.FormatUint(e.leaseSeq.Add(1), 36)
	ceil := leasePollMin
	for {
		ok, err := e.leases.AcquireLease(ctx, key, id, t.rt.limit, leaseTTL)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, false
		case err != nil:
			return func() {}, true
		case ok:
			return e.keepLease(key, id), true
		}
		d := min(e.randDuration(ceil)+time.Millisecond, time.Until(deadline))
		if d <= 0 {
			return nil, false
		}
		t.rt.queued.Add(1)
		err = wait.For(ctx, d)
		t.rt.queued.Add(-1)
		if err != nil {
			return nil, false
		}
		ceil = min(2*ceil, leasePollMax)
	}
}

// keepLease renews the lease id on key every leaseTTL/3 until the
// returned function gives it back.
func (e *Engine) keepLease(key, id string) func() {
	var mu sync.Mutex
	released := false
	var timer *time.Timer
	mu.Lock()
	defer mu.Unlock()
	timer = time.AfterFunc(leaseTTL/3, func() {
		held, _ := e.leases.RenewLease(storeCtx(), key, id, leaseTTL)
		mu.Lock()
		defer mu.Unlock()
		if held && !released {
			timer.Reset(leaseTTL / 3)
		}
	})
	return func() {
		mu.Lock()
		released = true
		timer.Stop()
		mu.Unlock()
		_ = e.leases.ReleaseLease(storeCtx(), key, id)
	}
}
