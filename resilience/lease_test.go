package resilience

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
	"github.com/llmguard/llmguard/state/redisstore"
	"github.com/llmguard/llmguard/state/redisstore/redistest"
)

// gauge is an upstream several engines call: each call takes delay, and
// it records the most calls it had in flight at once.
type gauge struct {
	*fakeAdapter
	delay     time.Duration
	now, most atomic.Int64
	calls     atomic.Int64
}

func (g *gauge) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	g.calls.Add(1)
	n := g.now.Add(1)
	defer g.now.Add(-1)
	for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
	}
	select {
	case <-time.After(g.delay):
	case <-ctx.Done():
		return nil, ctxError(g.name, req.Model, ctx.Err())
	}
	return g.fakeAdapter.Stream(ctx, req)
}

// callBoth makes n calls on each engine at once and returns how many failed.
func callBoth(n int, engines ...*Engine) int64 {
	var failed atomic.Int64
	var wg sync.WaitGroup
	for _, e := range engines {
		for range n {
			wg.Go(func() {
				if _, err := e.Chat(context.Background(), &Call{Route: "default", Request: userReq("hi")}); err != nil {
					failed.Add(1)
				}
			})
		}
	}
	wg.Wait()
	return failed.Load()
}

// TestConcurrencyCapShared: two engines (replicas) with max_concurrency 2
// on one target: on one lease store, never more than 2 calls reach the
// upstream at once, and every call is answered in turn; each capping its
// own calls, 4 do.
func TestConcurrencyCapShared(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shared bool
		most   int64
	}{{"shared", true, 2}, {"per engine", false, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				up := &gauge{fakeAdapter: newFake("a"), delay: time.Second}
				leases := memstore.NewLeases()
				routes := map[string]*Route{"default": {Targets: targets("a/m1"), MaxConcurrency: 2, QueueTimeout: 30 * time.Second}}
				opt := func(o *Options) {
					o.Adapters["a"] = up
					if tc.shared {
						o.Leases = leases
					}
				}
				ha, hb := newHarness(t, routes, opt), newHarness(t, routes, opt)
				start := time.Now()
				if failed := callBoth(4, ha.eng, hb.eng); failed != 0 {
					t.Fatalf("%d of 8 calls failed", failed)
				}
				if m := up.most.Load(); m != tc.most {
					t.Errorf("at most %d calls in flight upstream, want %d", m, tc.most)
				}
				if took := time.Since(start); tc.shared && took < 4*time.Second {
					t.Errorf("8 one-second calls two at a time took %v", took)
				}
			})
		})
	}
}

// TestConcurrencyLeaseRenewed: a call that holds its slot longer than the
// lease's TTL (a long stream) keeps it: its engine renews the lease, so
// the other engine's call waits for the slot.
func TestConcurrencyLeaseRenewed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := &gauge{fakeAdapter: newFake("a"), delay: 2 * leaseTTL}
		leases := memstore.NewLeases()
		routes := map[string]*Route{"default": {Targets: targets("a/m1"), MaxConcurrency: 1, Timeout: 5 * leaseTTL,
			QueueTimeout: 5 * leaseTTL}}
		opt := func(o *Options) { o.Adapters["a"], o.Leases = up, leases }
		ha, hb := newHarness(t, routes, opt), newHarness(t, routes, opt)
		if failed := callBoth(1, ha.eng, hb.eng); failed != 0 {
			t.Fatalf("%d of 2 calls failed", failed)
		}
		if m := up.most.Load(); m != 1 {
			t.Errorf("%d calls in flight at once under a shared cap of 1 held past the lease's TTL", m)
		}
	})
}

// TestConcurrencyLeaseOfDeadReplica: a lease its holder stopped renewing
// (a replica killed mid-call) frees its slot within leaseTTL.
func TestConcurrencyLeaseOfDeadReplica(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leases := memstore.NewLeases()
		// The dead replica's lease, never renewed.
		if ok, _ := leases.AcquireLease(context.Background(), leaseKey("a/m1"), "dead:1", 1, leaseTTL); !ok {
			t.Fatal("no lease")
		}
		routes := map[string]*Route{"default": {Targets: targets("a/m1"), MaxConcurrency: 1, Timeout: 2 * leaseTTL,
			QueueTimeout: 2 * leaseTTL}}
		h := newHarness(t, routes, func(o *Options) { o.Leases = leases })
		start := time.Now()
		if _, err := h.chat("default"); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < leaseTTL-time.Second || took > leaseTTL+time.Second {
			t.Errorf("the call got the dead replica's slot after %v, want about %v", took, leaseTTL)
		}
	})
}

// TestConcurrencyCapSharedOnRedis: the same on a real redis-server, in
// real time: two engines on one Redis, a cap of 2, twelve calls of 30ms;
// never more than 2 reach the upstream at once.
func TestConcurrencyCapSharedOnRedis(t *testing.T) {
	srv := redistest.Start(t)
	st, err := redisstore.New(context.Background(), &redisstore.Options{URL: srv.URL(), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	up := &gauge{fakeAdapter: newFake("a"), delay: 30 * time.Millisecond}
	engine := func() *Engine {
		e, err := New(&Options{Routes: map[string]Route{"default": {Targets: targets("a/m1"), MaxConcurrency: 2,
			QueueTimeout: 20 * time.Second, Timeout: 30 * time.Second}},
			Adapters: map[string]provider.Adapter{"a": up}, Store: st, Leases: st})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	if failed := callBoth(6, engine(), engine()); failed != 0 {
		t.Fatalf("%d of 12 calls failed", failed)
	}
	if m := up.most.Load(); m > 2 {
		t.Errorf("%d calls in flight at once on Redis-shared cap of 2", m)
	}
	if s := st.Status(); !s.Shared || s.Fallbacks != 0 {
		t.Errorf("store status %+v: the leases were not all on Redis", s)
	}
	var _ state.LeaseStore = st
}
