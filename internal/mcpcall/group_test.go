package mcpcall

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

type result struct{ text string }

func newTestGroup(ttl time.Duration, entries int) *Group[*result, string] {
	return NewGroup[*result, string](&GroupOptions[*result]{Store: NewCache[*result](entries), TTL: ttl})
}

func TestGroupSharesOneFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTestGroup(time.Minute, 10)
		var runs atomic.Int32
		release := make(chan struct{})
		fn := func(ctx context.Context, _ func(string)) (*result, error) {
			runs.Add(1)
			<-release
			return &result{"hi"}, nil
		}
		const n = 8
		var wg sync.WaitGroup
		results := make([]*result, n)
		for i := range n {
			wg.Go(func() { results[i], _, _ = g.Do(context.Background(), "k", nil, nil, fn) })
		}
		synctest.Wait() // every caller waits on the one flight
		close(release)
		wg.Wait()
		for i, r := range results {
			if r == nil || r.text != "hi" {
				t.Fatalf("caller %d got %+v", i, r)
			}
		}
		if got := runs.Load(); got != 1 {
			t.Errorf("fn ran %d times, want 1", got)
		}
		r, cached, err := g.Do(context.Background(), "k", nil, nil, fn)
		if err != nil || !cached || r.text != "hi" {
			t.Errorf("second call: %+v, cached %v, %v; want the stored result", r, cached, err)
		}
		time.Sleep(time.Minute)
		if _, cached, _ := g.Do(context.Background(), "k", nil, nil, fn); cached || runs.Load() != 2 {
			t.Errorf("after the TTL: cached=%v runs=%d, want a fresh run", cached, runs.Load())
		}
	})
}

func TestGroupFailuresAreNotStored(t *testing.T) {
	g := newTestGroup(time.Minute, 10)
	var runs int
	fn := func(ctx context.Context, _ func(string)) (*result, error) {
		runs++
		return nil, errors.New("down")
	}
	for range 2 {
		if _, _, err := g.Do(context.Background(), "k", nil, nil, fn); err == nil {
			t.Fatal("want error")
		}
	}
	if runs != 2 {
		t.Errorf("fn ran %d times, want 2", runs)
	}
}

func TestGroupKeep(t *testing.T) {
	g := NewGroup[*result, string](&GroupOptions[*result]{Keep: func(r *result) bool { return r.text != "static" }})
	var runs int
	fn := func(ctx context.Context, _ func(string)) (*result, error) { runs++; return &result{"static"}, nil }
	g.Do(context.Background(), "k", nil, nil, fn)
	g.Do(context.Background(), "k", nil, nil, fn)
	if runs != 2 {
		t.Errorf("fn ran %d times, want 2 (Keep refused to store)", runs)
	}
}

func TestGroupCancel(t *testing.T) {
	t.Run("last caller gone aborts the flight", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newTestGroup(time.Minute, 10)
			aborted := make(chan error, 1)
			fn := func(ctx context.Context, _ func(string)) (*result, error) {
				<-ctx.Done()
				aborted <- ctx.Err()
				return nil, ctx.Err()
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { _, _, err := g.Do(ctx, "k", nil, nil, fn); done <- err }()
			synctest.Wait()
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("caller got %v, want context.Canceled", err)
			}
			if err := <-aborted; !errors.Is(err, context.Canceled) {
				t.Errorf("flight ended with %v, want context.Canceled", err)
			}
		})
	})
	t.Run("flight survives while another caller waits", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newTestGroup(time.Minute, 10)
			release := make(chan struct{})
			fn := func(ctx context.Context, _ func(string)) (*result, error) {
				select {
				case <-release:
					return &result{"a/b"}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			ctx1, cancel1 := context.WithCancel(context.Background())
			first := make(chan error, 1)
			go func() { _, _, err := g.Do(ctx1, "k", nil, nil, fn); first <- err }()
			synctest.Wait()
			second := make(chan *result, 1)
			go func() { r, _, _ := g.Do(context.Background(), "k", nil, nil, fn); second <- r }()
			synctest.Wait() // the second caller has joined
			cancel1()
			<-first
			close(release)
			if r := <-second; r == nil || r.text != "a/b" {
				t.Errorf("second caller got %+v, want the flight's result", r)
			}
		})
	})
}

// TestGroupRunFor: a flight with its own deadline outlives a caller whose
// deadline passed, and the caller's repeat joins it instead of running
// again; a caller that cancels aborts it, and a repeat then sees how the
// aborted flight ended before anything runs again.
func TestGroupRunFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTestGroup(time.Minute, 10)
		var runs atomic.Int32
		fn := func(ctx context.Context, _ func(string)) (*result, error) {
			runs.Add(1)
			select {
			case <-time.After(3 * time.Second):
				return &result{"done"}, nil
			case <-ctx.Done():
				return &result{"aborted"}, nil // an outcome worth keeping
			}
		}
		o := &CallOptions{RunFor: time.Minute}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, _, err := g.Do(ctx, "k", o, nil, fn); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("first call: %v, want its deadline", err)
		}
		start := time.Now()
		r, _, err := g.Do(context.Background(), "k", o, nil, fn)
		if err != nil || r.text != "done" || time.Since(start) != 2*time.Second {
			t.Fatalf("repeat: %+v, %v after %v; want the first flight's result after 2s", r, err, time.Since(start))
		}

		cctx, ccancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { g.Do(cctx, "c", o, nil, fn); close(done) }()
		synctest.Wait()
		ccancel()
		<-done
		r, cached, _ := g.Do(context.Background(), "c", o, nil, fn)
		if r == nil || r.text != "aborted" || !cached {
			t.Errorf("after a cancel: %+v (cached %v), want the aborted flight's stored outcome", r, cached)
		}
		if got := runs.Load(); got != 2 {
			t.Errorf("fn ran %d times, want 2", got)
		}
	})
}

func TestGroupEventsReachWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newTestGroup(time.Minute, 10)
		release := make(chan struct{})
		fn := func(ctx context.Context, emit func(string)) (*result, error) {
			<-release
			emit("half way")
			return &result{"x"}, nil
		}
		var mu sync.Mutex
		var got []string
		sinkFor := func(name string) func(string) {
			return func(e string) { mu.Lock(); got = append(got, name+": "+e); mu.Unlock() }
		}
		var wg sync.WaitGroup
		wg.Go(func() { g.Do(context.Background(), "k", nil, sinkFor("a"), fn) })
		wg.Go(func() { g.Do(context.Background(), "k", nil, sinkFor("b"), fn) })
		synctest.Wait()
		close(release)
		wg.Wait()
		if len(got) != 2 {
			t.Errorf("events %q, want one per waiter", got)
		}
	})
}

func TestGroupPanic(t *testing.T) {
	g := NewGroup[*result, string](&GroupOptions[*result]{Logger: discard()})
	_, _, err := g.Do(context.Background(), "k", nil, nil, func(context.Context, func(string)) (*result, error) { panic("boom") })
	if pe, ok := errors.AsType[*PanicError](err); !ok || pe.Value != "boom" {
		t.Errorf("err = %v, want a *PanicError of boom", err)
	}
}

// TestCacheIsBounded: the stored results never outgrow the bound; which
// one goes when the cache is full is otter's choice (its admission policy,
// not the oldest first).
func TestCacheIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCache[*result](2)
		g := NewGroup[*result, string](&GroupOptions[*result]{Store: c, TTL: time.Hour})
		fn := func(ctx context.Context, _ func(string)) (*result, error) { return &result{}, nil }
		for _, k := range []string{"a", "b", "c"} {
			g.Do(context.Background(), k, nil, nil, fn)
			time.Sleep(time.Second)
		}
		c.c.CleanUp() // otter evicts in its maintenance; run it now
		if n := c.c.EstimatedSize(); n != 2 {
			t.Fatalf("cache holds %d entries, want 2", n)
		}
	})
}

func TestGroupPerCallTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewCache[*result](10)
		g := NewGroup[*result, string](&GroupOptions[*result]{Store: c, TTL: time.Hour})
		var runs int
		fn := func(ctx context.Context, _ func(string)) (*result, error) { runs++; return &result{}, nil }
		for _, tc := range []struct {
			advance time.Duration
			cached  bool
		}{{0, false}, {time.Second, true}, {2 * time.Second, false}} {
			time.Sleep(tc.advance)
			_, cached, _ := g.Do(context.Background(), "k", &CallOptions{TTL: 2 * time.Second}, nil, fn)
			if cached != tc.cached {
				t.Errorf("after +%s: cached=%v, want %v", tc.advance, cached, tc.cached)
			}
		}
		g.Do(context.Background(), "n", &CallOptions{TTL: -1}, nil, fn)
		if _, ok, _ := c.Get(context.Background(), "n"); ok {
			t.Errorf("ttl < 0 stored a result")
		}
	})
}
