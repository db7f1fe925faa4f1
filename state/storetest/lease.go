package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmguard/llmguard/state"
)

// RunLeases runs the conformance suite for a state.LeaseStore against
// stores made by newStore, each subtest with a fresh, empty store.
func RunLeases(t *testing.T, newStore func(t *testing.T) state.LeaseStore) {
	t.Helper()
	runCases(t, newStore, []suiteCase[state.LeaseStore]{
		{"LimitHolds", leaseLimitHolds},
		{"RenewAndRelease", leaseRenewAndRelease},
		{"ConcurrentAcquire", leaseConcurrentAcquire},
		{"LeasesExpire", leasesExpire},
		{"RenewedLeaseOutlivesItsTTL", renewedLeaseOutlives},
		{"CanceledContext", leaseCanceledContext},
	})
}

func acquire(ctx context.Context, t *testing.T, st state.LeaseStore, key, id string, limit int, ttl time.Duration) bool {
	t.Helper()
	ok, err := st.AcquireLease(ctx, key, id, limit, ttl)
	if err != nil {
		t.Fatalf("AcquireLease(%s, %s): %v", key, id, err)
	}
	return ok
}

// leaseLimitHolds: limit leases on a key, no more; another key has its
// own; a released lease frees its slot.
func leaseLimitHolds(ctx context.Context, t *testing.T, st state.LeaseStore) {
	for i := range 2 {
		if !acquire(ctx, t, st, "lease/a/m", fmt.Sprint("r1:", i), 2, time.Minute) {
			t.Fatalf("lease %d of 2 refused", i)
		}
	}
	if acquire(ctx, t, st, "lease/a/m", "r2:0", 2, time.Minute) {
		t.Fatal("a third lease of 2 granted")
	}
	if !acquire(ctx, t, st, "lease/b/m", "r2:1", 2, time.Minute) {
		t.Fatal("a lease on another key refused")
	}
	if err := st.ReleaseLease(ctx, "lease/a/m", "r1:0"); err != nil {
		t.Fatal(err)
	}
	if !acquire(ctx, t, st, "lease/a/m", "r2:2", 2, time.Minute) {
		t.Fatal("a lease refused after one of 2 was released")
	}
	if acquire(ctx, t, st, "lease/a/m", "r2:3", 2, time.Minute) {
		t.Fatal("a third lease of 2 granted after a release and a new lease")
	}
}

// leaseRenewAndRelease: a held lease renews; a released one does not, and
// a second release is harmless.
func leaseRenewAndRelease(ctx context.Context, t *testing.T, st state.LeaseStore) {
	acquire(ctx, t, st, "k", "l1", 1, time.Minute)
	if ok, err := st.RenewLease(ctx, "k", "l1", time.Minute); err != nil || !ok {
		t.Errorf("RenewLease of a held lease = %v, %v", ok, err)
	}
	if ok, err := st.RenewLease(ctx, "k", "other", time.Minute); err != nil || ok {
		t.Errorf("RenewLease of a lease never taken = %v, %v", ok, err)
	}
	for range 2 {
		if err := st.ReleaseLease(ctx, "k", "l1"); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := st.RenewLease(ctx, "k", "l1", time.Minute); err != nil || ok {
		t.Errorf("RenewLease of a released lease = %v, %v", ok, err)
	}
	if !acquire(ctx, t, st, "k", "l2", 1, time.Minute) {
		t.Error("lease refused after the only one was released")
	}
}

// leaseConcurrentAcquire: of 16 callers at once, limit get a lease.
func leaseConcurrentAcquire(ctx context.Context, t *testing.T, st state.LeaseStore) {
	const limit, callers = 3, 16
	var granted atomic.Int64
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			ok, err := st.AcquireLease(ctx, "hot", fmt.Sprint("c", i), limit, time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				granted.Add(1)
			}
		})
	}
	wg.Wait()
	if n := granted.Load(); n != limit {
		t.Errorf("%d of %d concurrent callers got a lease, want %d", n, callers, limit)
	}
}

// leasesExpire: a lease nobody renews goes at its TTL (its holder died),
// and frees its slot.
func leasesExpire(ctx context.Context, t *testing.T, st state.LeaseStore) {
	acquire(ctx, t, st, "k", "dead", 1, 50*time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for !acquire(ctx, t, st, "k", "next", 1, time.Minute) {
		if time.Now().After(deadline) {
			t.Fatal("a lease with a 50ms TTL still held 5s later")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ok, err := st.RenewLease(ctx, "k", "dead", time.Minute); err != nil || ok {
		t.Errorf("RenewLease of an expired lease = %v, %v", ok, err)
	}
}

// renewedLeaseOutlives: a lease renewed before its TTL is held past it.
// (A try whose renewal came too late, on a loaded machine, proves nothing
// and is made again.)
func renewedLeaseOutlives(ctx context.Context, t *testing.T, st state.LeaseStore) {
	const ttl = 500 * time.Millisecond
	for try := range 5 {
		id := fmt.Sprint("l", try)
		start := time.Now()
		if !acquire(ctx, t, st, "k", id, 1, ttl) {
			t.Fatalf("try %d: lease refused", try)
		}
		time.Sleep(ttl / 5)
		ok, err := st.RenewLease(ctx, "k", id, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(start) >= ttl {
			st.ReleaseLease(ctx, "k", id)
			continue
		}
		if !ok {
			t.Fatalf("RenewLease within the TTL = false")
		}
		time.Sleep(time.Until(start.Add(ttl + ttl/2)))
		if acquire(ctx, t, st, "k", "other", 1, time.Minute) {
			t.Fatal("a lease renewed within its TTL was gone after it")
		}
		return
	}
	t.Skip("the machine is too loaded to renew within 500ms")
}

func leaseCanceledContext(_ context.Context, t *testing.T, st state.LeaseStore) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ok, err := st.AcquireLease(ctx, "k", "l", 1, time.Minute); err == nil || ok {
		t.Errorf("AcquireLease with a canceled context = %v, %v", ok, err)
	}
	if ok, err := st.RenewLease(ctx, "k", "l", time.Minute); err == nil || ok {
		t.Errorf("RenewLease with a canceled context = %v, %v", ok, err)
	}
}
