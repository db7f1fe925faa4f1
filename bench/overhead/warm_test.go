package overhead

import (
	"context"
	"testing"
	"time"
)

// After warm-up, a steady closed loop of 256 clients opens no connection to
// the upstream, through the proxy or through the gateway: warm-up has had
// 256 requests at the upstream at once on each path, so each holds as many
// connections as the load can ever use at once. (With a warm-up of 100 ms
// of that loop alone, the requests at the upstream at once rarely reached
// 256 on a loaded machine, and the pools went on growing into the
// measurement: the scaling table's intermittent "new conns/s" at 256
// connections, on both paths.)
func TestWarmFillsPools(t *testing.T) {
	const clients = 256
	st, err := newStack(SpawnSelf)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := chat(false, 0)
	warm(ctx, st, w, clients)
	for _, p := range []path{proxy, guard} {
		before := st.upstream.accepted.Load()
		tl := closed(ctx, st, w, p, clients, 300*time.Millisecond)
		if tl.errors != 0 {
			t.Fatalf("%s: %d errors, the first: %v", pathNames[p], tl.errors, tl.firstErr)
		}
		if n := st.upstream.accepted.Load() - before; n != 0 {
			t.Errorf("%s: %d new connections to the upstream in %d requests from %d clients after warm-up, want 0", pathNames[p], n, tl.requests, clients)
		}
	}
}
