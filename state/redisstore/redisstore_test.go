package redisstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/internal/syncbuf"
	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/redisstore"
	"github.com/llmguard/llmguard/state/redisstore/redistest"
	"github.com/llmguard/llmguard/state/storetest"
)

var prefixes atomic.Int64

// newStore returns a store on srv under a prefix of its own (so, empty),
// closed when t ends. o may set fields; URL and Prefix are filled in.
func newStore(t testing.TB, srv *redistest.Server, o *redisstore.Options) *redisstore.Store {
	t.Helper()
	v := defaults.Copy(o)
	if v.URL == "" {
		v.URL = srv.URL()
	}
	addr := v.URL
	if v.Timeout == 0 {
		v.Timeout = time.Second // the suite tests sharing; TestRedisSlow the timeout
	}
	if v.Prefix == "" {
		v.Prefix = fmt.Sprintf("test%d:", prefixes.Add(1))
	}
	st, err := redisstore.New(context.Background(), &v)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if s := st.Status(); !s.Shared {
		t.Fatalf("store on %s does not share: %+v", addr, s)
	}
	return st
}

func TestConformance(t *testing.T) {
	srv := redistest.Start(t)
	storetest.Run(t, func(t *testing.T) state.Store { return newStore(t, srv, nil) })
	storetest.RunItems(t, func(t *testing.T) state.ItemStore { return newStore(t, srv, nil) })
	storetest.RunResults(t, func(t *testing.T) state.ResultStore { return newStore(t, srv, nil) })
	storetest.RunPipelined(t, func(t *testing.T) state.Pipelined { return newStore(t, srv, nil) })
}

// Two stores on one server (two replicas) update one record: every
// increment of both lands, and each sees the other's writes.
func TestReplicasShareAtomically(t *testing.T) {
	srv := redistest.Start(t)
	a := newStore(t, srv, &redisstore.Options{Prefix: "shared:"})
	b := newStore(t, srv, &redisstore.Options{Prefix: "shared:"})
	ctx := context.Background()
	// b caches the empty record client-side before a writes it.
	if r, _ := b.Breaker(ctx, "target/p/m"); r.WindowCalls != 0 {
		t.Fatalf("fresh record: %+v", r)
	}
	const workers, each = 4, 50
	var wg sync.WaitGroup
	for w := range 2 * workers {
		st := a
		if w%2 == 1 {
			st = b
		}
		wg.Go(func() {
			for range each {
				if _, err := st.UpdateBreaker(ctx, "target/p/m", func(r *state.Breaker) bool { r.WindowCalls++; return true }); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for name, st := range map[string]*redisstore.Store{"a": a, "b": b} {
		if r, _ := st.Breaker(ctx, "target/p/m"); r.WindowCalls != 2*workers*each {
			t.Errorf("replica %s reads WindowCalls=%d, want %d", name, r.WindowCalls, 2*workers*each)
		}
		if s := st.Status(); s.Fallbacks != 0 {
			t.Errorf("replica %s served %d calls locally", name, s.Fallbacks)
		}
	}
}

// A breaker opened through one replica is seen by another that had the
// closed record in its client-side cache, within a second (the
// invalidation normally arrives within a round trip).
func TestOpenSeenByOtherReplica(t *testing.T) {
	srv := redistest.Start(t)
	a := newStore(t, srv, &redisstore.Options{Prefix: "shared:"})
	b := newStore(t, srv, &redisstore.Options{Prefix: "shared:"})
	ctx := context.Background()
	for range 3 {
		b.Breaker(ctx, "target/p/m") // cached: closed
	}
	until := time.Now().Add(time.Minute)
	if _, err := a.UpdateBreaker(ctx, "target/p/m", func(r *state.Breaker) bool {
		r.State, r.OpenUntil = state.Open, until
		return true
	}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		r, err := b.Breaker(ctx, "target/p/m")
		if err != nil {
			t.Fatal(err)
		}
		if r.State == state.Open && r.OpenUntil.Equal(until) {
			t.Logf("seen after %v", time.Since(start))
			return
		}
		if time.Since(start) > time.Second {
			t.Fatalf("replica b still reads %+v a second after a opened it", r)
		}
		time.Sleep(time.Millisecond)
	}
}

// Every record expires: IdleTTL after its last write, or IdleTTL after the
// end of its open period when that is later, by the server's clock.
func TestRecordsExpire(t *testing.T) {
	srv := redistest.Start(t)
	st := newStore(t, srv, &redisstore.Options{Prefix: "ttl:", IdleTTL: time.Hour})
	ctx := context.Background()
	st.UpdateBreaker(ctx, "quiet", func(r *state.Breaker) bool { r.WindowCalls = 1; return true })
	st.UpdateBreaker(ctx, "open", func(r *state.Breaker) bool {
		r.State, r.OpenUntil = state.Open, time.Now().Add(3*time.Hour)
		return true
	})
	st.PutItems(ctx, []state.Item{{Key: "s/msg_1", Value: []byte("v")}})
	for _, tc := range []struct {
		key      string
		min, max time.Duration
	}{
		{"ttl:v1:breaker:{quiet}", 59 * time.Minute, time.Hour},
		{"ttl:v1:breaker:{open}", 3*time.Hour + 59*time.Minute, 4 * time.Hour},
		{"ttl:v1:item:{s/msg_1}", 59 * time.Minute, time.Hour},
	} {
		ms, err := redistest.Command(srv.Addr(), "PTTL", tc.key)
		if err != nil {
			t.Fatal(err)
		}
		var got time.Duration
		fmt.Sscan(ms, &got)
		got *= time.Millisecond
		if got < tc.min || got > tc.max {
			t.Errorf("%s expires in %v, want between %v and %v", tc.key, got, tc.min, tc.max)
		}
	}
	// And it does expire: a 200ms idle TTL.
	short := newStore(t, srv, &redisstore.Options{Prefix: "short:", IdleTTL: 200 * time.Millisecond})
	short.UpdateBreaker(ctx, "k", func(r *state.Breaker) bool { r.WindowCalls = 1; return true })
	deadline := time.Now().Add(3 * time.Second)
	for {
		n, err := redistest.Command(srv.Addr(), "EXISTS", "short:v1:breaker:{k}")
		if err != nil {
			t.Fatal(err)
		}
		if n == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("record with a 200ms TTL still there after 3s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r, _ := short.Breaker(ctx, "k"); r.WindowCalls != 0 {
		t.Errorf("expired record still read: %+v", r)
	}
}

// Redis killed (SIGKILL) mid-run: no call fails, each is served from
// local state, the outage is logged once, and once Redis is back the
// replicas share again.
func TestRedisKilled(t *testing.T) {
	srv := redistest.Start(t)
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	a := newStore(t, srv, &redisstore.Options{Prefix: "kill:", Logger: log})
	b := newStore(t, srv, &redisstore.Options{Prefix: "kill:"})
	ctx := context.Background()
	incr := func(st *redisstore.Store) (state.Breaker, error) {
		return st.UpdateBreaker(ctx, "target/p/m", func(r *state.Breaker) bool { r.WindowCalls++; return true })
	}
	incr(a)
	srv.Kill()
	for i := range 100 {
		if _, err := incr(a); err != nil {
			t.Fatalf("call %d with Redis down failed: %v", i, err)
		}
		if _, err := a.Breaker(ctx, "target/p/m"); err != nil {
			t.Fatalf("read %d with Redis down failed: %v", i, err)
		}
		if err := a.PutItems(ctx, []state.Item{{Key: "k", Value: []byte("v")}}); err != nil {
			t.Fatal(err)
		}
		if v, err := a.GetItems(ctx, []string{"k"}); err != nil || string(v[0]) != "v" {
			t.Fatalf("GetItems with Redis down = %q, %v", v, err)
		}
		// Leases: the local state holds the limit meanwhile.
		id := fmt.Sprint("l", i)
		if ok, err := a.AcquireLease(ctx, "lease/p/m", id, 1, time.Minute); err != nil || !ok {
			t.Fatalf("AcquireLease with Redis down = %v, %v", ok, err)
		}
		if ok, _ := a.AcquireLease(ctx, "lease/p/m", "other", 1, time.Minute); ok {
			t.Fatal("with Redis down, a second lease of 1 granted")
		}
		if ok, err := a.RenewLease(ctx, "lease/p/m", id, time.Minute); err != nil || !ok {
			t.Fatalf("RenewLease with Redis down = %v, %v", ok, err)
		}
		if err := a.ReleaseLease(ctx, "lease/p/m", id); err != nil {
			t.Fatal(err)
		}
	}
	s := a.Status()
	if s.Shared || s.Outages != 1 || s.Fallbacks < 800 {
		t.Errorf("status with Redis down: %+v", s)
	}
	if n := strings.Count(logs.String(), "redis unreachable"); n != 1 {
		t.Errorf("outage logged %d times, want once:\n%s", n, logs.String())
	}
	srv.Restart()
	deadline := time.Now().Add(15 * time.Second) // backoff tops out at 5s
	// b was idle while Redis was away: it finds out at its first call.
	for i := 0; ; i++ {
		if _, err := a.UpdateBreaker(ctx, "after", func(r *state.Breaker) bool { r.Trips = i; return true }); err != nil {
			t.Fatal(err)
		}
		r, err := b.Breaker(ctx, "after")
		if err != nil {
			t.Fatal(err)
		}
		if r.Trips == i && a.Status().Shared && b.Status().Shared {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not sharing 15s after Redis restarted: a %+v, b %+v", a.Status(), b.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "sharing state") {
		t.Errorf("recovery not logged:\n%s", logs.String())
	}
}

// A Redis that stops answering (DEBUG SLEEP) holds a call for at most
// about Timeout before it is served locally.
func TestRedisSlow(t *testing.T) {
	srv := redistest.Start(t)
	st := newStore(t, srv, &redisstore.Options{Prefix: "slow:", Timeout: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	st.UpdateBreaker(ctx, "k", func(r *state.Breaker) bool { r.WindowCalls = 1; return true })
	go redistest.Command(srv.Addr(), "DEBUG", "SLEEP", "1")
	time.Sleep(100 * time.Millisecond) // the sleep has begun
	start := time.Now()
	if _, err := st.UpdateBreaker(ctx, "k", func(r *state.Breaker) bool { r.WindowCalls++; return true }); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("a call to a Redis that does not answer took %v, want about the 50ms timeout", took)
	}
	if s := st.Status(); s.Shared || s.Fallbacks == 0 {
		t.Errorf("status after a timeout: %+v", s)
	}
}

// A server that never answered at start is no error: the store starts on
// local state and shares once the server is there.
func TestStartWithoutRedis(t *testing.T) {
	srv := redistest.Start(t)
	srv.Kill()
	st, err := redisstore.New(context.Background(), &redisstore.Options{URL: srv.URL(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if _, err := st.UpdateBreaker(ctx, "k", func(r *state.Breaker) bool { r.WindowCalls = 1; return true }); err != nil {
		t.Fatal(err)
	}
	if s := st.Status(); s.Shared || s.Outages != 1 {
		t.Errorf("status with no server: %+v", s)
	}
	srv.Restart()
	deadline := time.Now().Add(15 * time.Second)
	for !st.Status().Shared {
		if time.Now().After(deadline) {
			t.Fatalf("not sharing 15s after the server started: %+v", st.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBadURL(t *testing.T) {
	for _, u := range []string{"", "http://127.0.0.1:6379", "redis://127.0.0.1:6379/x"} {
		if _, err := redisstore.New(context.Background(), &redisstore.Options{URL: u}); err == nil {
			t.Errorf("New(%q) succeeded", u)
		}
	}
}

// A replica's guess of a record (its last read) that another replica has
// since changed is never taken for the answer: fn decides on the record
// as the server holds it, also when it changes nothing.
func TestStaleGuessNotAnswered(t *testing.T) {
	srv := redistest.Start(t)
	a := newStore(t, srv, &redisstore.Options{Prefix: "guess:"})
	b := newStore(t, srv, &redisstore.Options{Prefix: "guess:"})
	ctx := context.Background()
	admit := func(r *state.Breaker) bool {
		if r.Probes >= 2 {
			return false
		}
		r.Probes++
		return true
	}
	if _, err := a.UpdateBreaker(ctx, "probe", admit); err != nil { // a guesses Probes=1 from now on
		t.Fatal(err)
	}
	if _, err := b.UpdateBreaker(ctx, "probe", admit); err != nil { // Probes=2
		t.Fatal(err)
	}
	got, err := a.UpdateBreaker(ctx, "probe", admit)
	if err != nil {
		t.Fatal(err)
	}
	if got.Probes != 2 {
		t.Errorf("a's third admission returned Probes=%d, want 2 (refused)", got.Probes)
	}
	// And with the guess right but fn declining, the answer is the record.
	got, _ = a.UpdateBreaker(ctx, "probe", func(r *state.Breaker) bool { return false })
	if got.Probes != 2 {
		t.Errorf("a no-change update returned Probes=%d, want 2", got.Probes)
	}
	// a's guess says full (Probes=2); b releases a probe: a must see the
	// free slot, not decline on its guess.
	if _, err := b.UpdateBreaker(ctx, "probe", func(r *state.Breaker) bool { r.Probes--; return true }); err != nil {
		t.Fatal(err)
	}
	admitted := false
	got, _ = a.UpdateBreaker(ctx, "probe", func(r *state.Breaker) bool { admitted = admit(r); return admitted })
	if !admitted || got.Probes != 2 {
		t.Errorf("after b released a probe, a's admission: admitted=%v Probes=%d, want true and 2", admitted, got.Probes)
	}
}

// A Redis Cluster of three nodes (redis-server --cluster-enabled yes on
// loopback) passes the same suite: each record's script runs on its
// slot's node, and records and items spread over the slots.
func TestClusterConformance(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	newCluster := func(t *testing.T) *redisstore.Store {
		return newStore(t, nil, &redisstore.Options{URL: c.URL()})
	}
	storetest.Run(t, func(t *testing.T) state.Store { return newCluster(t) })
	storetest.RunItems(t, func(t *testing.T) state.ItemStore { return newCluster(t) })
	storetest.RunResults(t, func(t *testing.T) state.ResultStore { return newCluster(t) })
	storetest.RunLeases(t, func(t *testing.T) state.LeaseStore { return newCluster(t) })
	storetest.RunPipelined(t, func(t *testing.T) state.Pipelined { return newCluster(t) })
	// The records of 50 targets landed on more than one node.
	st := newCluster(t)
	ctx := context.Background()
	for i := range 50 {
		st.UpdateBreaker(ctx, fmt.Sprintf("target/p/m%d", i), func(r *state.Breaker) bool { r.WindowCalls = 1; return true })
	}
	used := 0
	for _, s := range c.Servers {
		if n, _ := redistest.Command(s.Addr(), "DBSIZE"); n != "0" {
			used++
		}
	}
	if used < 2 {
		t.Errorf("50 targets' records on %d node(s) of 3", used)
	}
}

func TestLeasesConformance(t *testing.T) {
	srv := redistest.Start(t)
	storetest.RunLeases(t, func(t *testing.T) state.LeaseStore { return newStore(t, srv, nil) })
}

// After Redis restarts, the replica's first writes find connections of
// its client that still lead to the killed server: the client sends a
// write again on a fresh one (the compare-and-set is safe to repeat)
// rather than the store beginning a second outage.
func TestWriteAfterRestart(t *testing.T) {
	srv := redistest.Start(t)
	st := newStore(t, srv, nil)
	ctx := context.Background()
	incr := func(r *state.Breaker) bool { r.WindowCalls++; return true }
	call := func() {
		if _, err := st.Breakers(ctx, []string{"key/p", "target/p/m"}); err != nil {
			t.Fatal(err)
		}
		st.UpdateBreakerLater("target/p/m", incr, nil)
	}
	for range 10 {
		call()
	}
	srv.Kill()
	call()
	srv.Restart()
	for deadline := time.Now().Add(15 * time.Second); !st.Status().Shared; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not sharing 15s after Redis restarted: %+v", st.Status())
		}
	}
	for range 10 {
		call()
	}
	if s := st.Status(); s.Outages != 1 || !s.Shared {
		t.Fatalf("after the restart: %+v", s)
	}
	redisstore.RoundTrips(t, st) // the writes done
	// (The writes asked as Redis went away may land after it came back.)
	if b, err := st.Breaker(ctx, "target/p/m"); err != nil || b.WindowCalls < 10 {
		t.Fatalf("after the restart, %d calls counted (%v), want at least 10", b.WindowCalls, err)
	}
}
