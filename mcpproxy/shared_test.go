package mcpproxy

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/state/memstore"
	"github.com/llmguard/llmguard/state/redisstore"
	"github.com/llmguard/llmguard/state/redisstore/redistest"
)

// TestSharedAcrossReplicas: two proxies (replicas) in front of one server,
// sharing a result store as they would share Redis: a repeat that reaches
// the other replica gets the first call's result, until the TTL ends.
func TestSharedAcrossReplicas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("pay")
		results := memstore.NewResults()
		a := newStack(t, &Config{Upstreams: []Upstream{f.upstream("pay")}, Results: results, CacheTTL: time.Minute})
		b := newStack(t, &Config{Upstreams: []Upstream{f.upstream("pay")}, Results: results, CacheTTL: time.Minute})
		args := map[string]any{"amount": 5}
		if txt, _ := a.call(t, context.Background(), "charge", args, nil); txt != "charged 5 (charge #1)" {
			t.Fatalf("replica a: %q", txt)
		}
		if txt, _ := b.call(t, context.Background(), "charge", args, nil); txt != "charged 5 (charge #1)" {
			t.Errorf("replica b: %q, want replica a's result", txt)
		}
		if n := f.Executions("charge"); n != 1 {
			t.Errorf("charge ran %d times over two replicas, want 1", n)
		}
		time.Sleep(time.Minute + time.Second)
		if txt, _ := b.call(t, context.Background(), "charge", args, nil); txt != "charged 5 (charge #2)" {
			t.Errorf("after the TTL: %q, want a new run", txt)
		}
	})
}

// TestInFlightAcrossReplicas: two proxies (replicas) on one Redis in front
// of one server, the same slow call sent to both at once: the second waits
// for the first's result instead of running the tool again, so the
// upstream executes it once and both callers get the same result.
func TestInFlightAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	f := newFake("pay")
	replica := func() *stack {
		st, err := redisstore.New(context.Background(), &redisstore.Options{URL: srv.URL(), Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return newStack(t, &Config{Upstreams: []Upstream{f.upstream("pay")}, Results: st, CacheTTL: time.Minute})
	}
	a, b := replica(), replica()
	args := map[string]any{"amount": 7, "sleep_ms": 500}
	var wg sync.WaitGroup
	got := make([]string, 2)
	for i, st := range []*stack{a, b} {
		wg.Go(func() {
			if i == 1 { // once a's call is running
				for deadline := time.Now().Add(10 * time.Second); f.Executions("charge") == 0; time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Error("replica a's call never reached the server")
						return
					}
				}
			}
			got[i], _ = st.call(t, context.Background(), "charge", args, nil)
		})
	}
	wg.Wait()
	if n := f.Executions("charge"); n != 1 {
		t.Errorf("charge ran %d times for one call sent to two replicas at once, want 1", n)
	}
	if got[0] != "charged 7 (charge #1)" || got[1] != got[0] {
		t.Errorf("replica a: %q, replica b: %q; want both the first call's result", got[0], got[1])
	}
}
