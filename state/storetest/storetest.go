// Package storetest is the conformance suite every state.Store backend runs:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) state.Store { return memstore.New() })
//	}
package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/state"
)

// Run runs the conformance suite against stores made by newStore. Each
// subtest gets a fresh, empty store.
func Run(t *testing.T, newStore func(t *testing.T) state.Store) {
	t.Helper()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, st state.Store)
	}{
		{"MissingIsZero", missingIsZero},
		{"UpdateStoresEveryField", updateStoresEveryField},
		{"FalseDoesNotStore", falseDoesNotStore},
		{"KeysAreIndependent", keysAreIndependent},
		{"AtomicPerKey", atomicPerKey},
		{"ProbeAdmissionIsExclusive", probeAdmissionIsExclusive},
		{"CanceledContext", canceledContext},
		{"ManyKeys", manyKeys},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

// t0 is the suite's reference time.
var t0 = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

// full is a breaker record with every field set.
var full = state.Breaker{
	State: state.Open, WindowStart: t0, WindowCalls: 10, WindowFailures: 6, WindowRateLimited: 2,
	PrevCalls: 30, PrevFailures: 4, PrevRateLimited: 3, OpenUntil: t0.Add(time.Minute), Trips: 2,
	Probes: 1, Asked: 12, ProbeFailures: 1, CooldownUntil: t0.Add(1500 * time.Millisecond), PaceAt: t0.Add(time.Second),
	WaitUntil: t0.Add(5 * time.Second), WaitBy: "replica-a",
	Pace:       state.Pace{Known: true, Tokens: -1.5, At: t0, Size: 10, Rate: 2.5, Full: t0.Add(8 * time.Second), Spent: t0.Add(3 * time.Second), Turn: t0.Add(2 * time.Second)},
	Facts:      state.Facts{NoPrefill: true, WholeUntil: t0.Add(30 * time.Second)},
	Generation: 7, Reason: "529 overloaded_error: Overloaded",
	Fault: state.Fault{Status: 401, Class: "auth", ProviderType: "authentication_error", RequestID: "req_1",
		Message: "401 authentication_error: invalid x-api-key (request-id req_1)", Since: t0, Until: t0.Add(time.Hour)},
}

var equalTimes = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

func missingIsZero(t *testing.T, st state.Store) {
	ctx := context.Background()
	b, err := st.Breaker(ctx, "target/x/y")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(state.Breaker{}, b, equalTimes); diff != "" {
		t.Errorf("missing key (-want +got):\n%s", diff)
	}
}

func updateStoresEveryField(t *testing.T, st state.Store) {
	ctx := context.Background()
	got, err := st.UpdateBreaker(ctx, "k", func(b *state.Breaker) bool {
		if diff := cmp.Diff(state.Breaker{}, *b, equalTimes); diff != "" {
			t.Errorf("fn saw a non-zero record for a new key:\n%s", diff)
		}
		*b = full
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full, got, equalTimes); diff != "" {
		t.Errorf("UpdateBreaker result (-want +got):\n%s", diff)
	}
	read, err := st.Breaker(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full, read, equalTimes); diff != "" {
		t.Errorf("Breaker after update (-want +got):\n%s", diff)
	}
}

func falseDoesNotStore(t *testing.T, st state.Store) {
	ctx := context.Background()
	if _, err := st.UpdateBreaker(ctx, "k", func(b *state.Breaker) bool { b.WindowCalls = 1; return true }); err != nil {
		t.Fatal(err)
	}
	got, err := st.UpdateBreaker(ctx, "k", func(b *state.Breaker) bool { b.WindowCalls = 99; return false })
	if err != nil {
		t.Fatal(err)
	}
	if got.WindowCalls != 1 {
		t.Errorf("UpdateBreaker returned WindowCalls=%d after fn returned false, want 1", got.WindowCalls)
	}
	read, _ := st.Breaker(ctx, "k")
	if read.WindowCalls != 1 {
		t.Errorf("stored WindowCalls=%d after fn returned false, want 1", read.WindowCalls)
	}
}

func keysAreIndependent(t *testing.T, st state.Store) {
	ctx := context.Background()
	for i, k := range []string{"target/a/m", "target/b/m", "key/a"} {
		if _, err := st.UpdateBreaker(ctx, k, func(b *state.Breaker) bool { b.WindowCalls = i + 1; return true }); err != nil {
			t.Fatal(err)
		}
	}
	for i, k := range []string{"target/a/m", "target/b/m", "key/a"} {
		b, _ := st.Breaker(ctx, k)
		if b.WindowCalls != i+1 {
			t.Errorf("%s: WindowCalls=%d, want %d", k, b.WindowCalls, i+1)
		}
	}
}

func atomicPerKey(t *testing.T, st state.Store) {
	ctx := context.Background()
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := st.UpdateBreaker(ctx, "hot", func(b *state.Breaker) bool { b.WindowCalls++; return true }); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b, _ := st.Breaker(ctx, "hot")
	if b.WindowCalls != workers*each {
		t.Errorf("WindowCalls=%d after %d concurrent increments: updates are not atomic", b.WindowCalls, workers*each)
	}
}

// probeAdmissionIsExclusive checks the pattern the engine relies on: admit
// at most N callers by incrementing Probes only while it is below N.
func probeAdmissionIsExclusive(t *testing.T, st state.Store) {
	ctx := context.Background()
	const n, callers = 2, 16
	var mu sync.Mutex
	admitted := 0
	var wg sync.WaitGroup
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok := false
			if _, err := st.UpdateBreaker(ctx, "probe", func(b *state.Breaker) bool {
				ok = b.Probes < n
				if ok {
					b.Probes++
				}
				return ok
			}); err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				admitted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if admitted != n {
		t.Errorf("admitted %d callers, want %d", admitted, n)
	}
}

func canceledContext(t *testing.T, st state.Store) {
	ctx := context.Background()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	called := false
	if _, err := st.UpdateBreaker(cctx, "k", func(b *state.Breaker) bool { called = true; return true }); err == nil {
		t.Error("UpdateBreaker with a canceled context returned no error")
	}
	if called {
		t.Error("UpdateBreaker ran fn with a canceled context")
	}
	if _, err := st.Breaker(cctx, "k"); err == nil {
		t.Error("Breaker with a canceled context returned no error")
	}
}

func manyKeys(t *testing.T, st state.Store) {
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		k := fmt.Sprintf("target/p/m%d", i)
		if _, err := st.UpdateBreaker(ctx, k, func(b *state.Breaker) bool { b.Generation = uint64(i); return true }); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 100; i++ {
		if b, _ := st.Breaker(ctx, fmt.Sprintf("target/p/m%d", i)); b.Generation != uint64(i) {
			t.Errorf("target/p/m%d: Generation=%d, want %d", i, b.Generation, i)
		}
	}
}

// RunPipelined runs the suite of a state.Pipelined store's own methods
// against stores made by newStore (each subtest gets a fresh, empty one).
func RunPipelined(t *testing.T, newStore func(t *testing.T) state.Pipelined) {
	t.Helper()
	t.Run("BreakersReadEach", func(t *testing.T) { breakersReadEach(t, newStore(t)) })
	t.Run("LaterIsAppliedInOrder", func(t *testing.T) { laterIsAppliedInOrder(t, newStore(t)) })
	t.Run("LaterFalseDoesNotStore", func(t *testing.T) { laterFalseDoesNotStore(t, newStore(t)) })
}

// breakersReadEach: Breakers answers what Breaker answers for each key,
// in order, the zero record where none (the keys on different Cluster
// slots).
func breakersReadEach(t *testing.T, st state.Pipelined) {
	ctx := context.Background()
	keys := []string{"key/p", "target/p/m1", "target/none", "target/p/m2"}
	for i, k := range keys {
		if k == "target/none" {
			continue
		}
		if _, err := st.UpdateBreaker(ctx, k, func(b *state.Breaker) bool { *b = full; b.Generation = uint64(i); return true }); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.Breakers(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(keys) {
		t.Fatalf("Breakers(%d keys) answered %d records", len(keys), len(got))
	}
	for i, k := range keys {
		want, err := st.Breaker(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got[i], equalTimes); diff != "" {
			t.Errorf("Breakers, %s (-Breaker +Breakers):\n%s", k, diff)
		}
	}
	if _, err := st.Breakers(canceled(), keys); err == nil {
		t.Error("Breakers with a canceled context returned no error")
	}
}

// laterIsAppliedInOrder: updates asked of one key from one goroutine are
// applied in the order asked, none lost among many goroutines', and each
// done is called once.
func laterIsAppliedInOrder(t *testing.T, st state.Pipelined) {
	const goroutines, each = 4, 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	done, last := 0, map[int]int{}
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				st.UpdateBreakerLater("k", func(b *state.Breaker) bool {
					b.WindowCalls++
					b.Reason = fmt.Sprintf("%d/%d", g, i)
					return true
				}, func(err error) {
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					defer mu.Unlock()
					done++
					if i <= last[g]-1 {
						t.Errorf("goroutine %d: update %d done after %d", g, i, last[g]-1)
					}
					last[g] = i + 1
				})
			}
		})
	}
	wg.Wait()
	waitDone(t, &mu, &done, goroutines*each)
	b, err := st.Breaker(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if b.WindowCalls != goroutines*each {
		t.Errorf("WindowCalls=%d after %d updates", b.WindowCalls, goroutines*each)
	}
}

// laterFalseDoesNotStore: an update that reports no change leaves nothing
// of what it did, even when written together with one that changed.
func laterFalseDoesNotStore(t *testing.T, st state.Pipelined) {
	var mu sync.Mutex
	done := 0
	count := func(error) { mu.Lock(); done++; mu.Unlock() }
	for range 20 {
		st.UpdateBreakerLater("k", func(b *state.Breaker) bool { b.Trips += 100; return false }, count)
		st.UpdateBreakerLater("k", func(b *state.Breaker) bool { b.WindowCalls++; return true }, count)
	}
	waitDone(t, &mu, &done, 40)
	b, err := st.Breaker(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if b.Trips != 0 || b.WindowCalls != 20 {
		t.Errorf("Trips=%d WindowCalls=%d, want 0 and 20", b.Trips, b.WindowCalls)
	}
}

// waitDone waits until *n reaches want, for at most 10 s.
func waitDone(t *testing.T, mu *sync.Mutex, n *int, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := *n
		mu.Unlock()
		if got == want {
			return
		}
		if got > want || time.Now().After(deadline) {
			t.Fatalf("%d updates done, want %d", got, want)
		}
		time.Sleep(time.Millisecond)
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
