package mcpproxy

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/state/memstore"
)

// TestSharedAcrossReplicas: two proxies (replicas) in front of one server,
// sharing an item store as they would share Redis: a repeat that reaches
// the other replica gets the first call's result, until the TTL ends.
func TestSharedAcrossReplicas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("pay")
		items := memstore.NewItems(nil)
		a := newStack(t, &Config{Upstreams: []Upstream{f.upstream("pay")}, Items: items, CacheTTL: time.Minute})
		b := newStack(t, &Config{Upstreams: []Upstream{f.upstream("pay")}, Items: items, CacheTTL: time.Minute})
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
