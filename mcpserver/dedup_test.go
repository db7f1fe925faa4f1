package mcpserver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestDedupSharesOneFlight(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	d := newDedup(clk.Now, nil, time.Minute, 10)
	var runs atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	fn := func(ctx context.Context, _ func(resilience.Event)) (*resilience.Result, error) {
		if runs.Add(1) == 1 {
			close(started)
		}
		<-release
		return &resilience.Result{Target: "a/b", Response: &provider.Response{Text: "hi"}}, nil
	}
	const n = 8
	var wg sync.WaitGroup
	results := make([]*resilience.Result, n)
	// The first caller starts the flight; the others join while it is held.
	wg.Add(1)
	go func() { defer wg.Done(); results[0], _ = d.do(context.Background(), "k", 0, nil, fn) }()
	<-started
	joined := make(chan struct{}, n)
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			joined <- struct{}{}
			results[i], _ = d.do(context.Background(), "k", 0, nil, fn)
		}()
	}
	for i := 1; i < n; i++ {
		<-joined
	}
	close(release)
	wg.Wait()
	for i, r := range results {
		if r == nil || r.Response.Text != "hi" {
			t.Fatalf("caller %d got %+v", i, r)
		}
	}
	// Callers that arrived after the flight ended were served from the
	// cache; either way the upstream ran once.
	if got := runs.Load(); got != 1 {
		t.Errorf("fn ran %d times, want 1", got)
	}
	r, err := d.do(context.Background(), "k", 0, nil, fn)
	if err != nil || !r.Cached {
		t.Errorf("second call: %+v, %v; want cached", r, err)
	}
	clk.Add(time.Minute)
	release = make(chan struct{})
	close(release)
	if r, _ := d.do(context.Background(), "k", 0, nil, fn); r.Cached || runs.Load() != 2 {
		t.Errorf("after the TTL: cached=%v runs=%d, want a fresh run", r.Cached, runs.Load())
	}
}

func TestDedupFailuresAreNotStored(t *testing.T) {
	d := newDedup(time.Now, nil, time.Minute, 10)
	var runs int
	fn := func(ctx context.Context, _ func(resilience.Event)) (*resilience.Result, error) {
		runs++
		return nil, errors.New("down")
	}
	for range 2 {
		if _, err := d.do(context.Background(), "k", 0, nil, fn); err == nil {
			t.Fatal("want error")
		}
	}
	if runs != 2 {
		t.Errorf("fn ran %d times, want 2", runs)
	}
}

func TestDedupCancel(t *testing.T) {
	t.Run("last caller gone aborts the flight", func(t *testing.T) {
		d := newDedup(time.Now, nil, time.Minute, 10)
		aborted := make(chan error, 1)
		started := make(chan struct{})
		fn := func(ctx context.Context, _ func(resilience.Event)) (*resilience.Result, error) {
			close(started)
			<-ctx.Done()
			aborted <- ctx.Err()
			return nil, ctx.Err()
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := d.do(ctx, "k", 0, nil, fn); done <- err }()
		<-started
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("caller got %v, want context.Canceled", err)
		}
		if err := <-aborted; !errors.Is(err, context.Canceled) {
			t.Errorf("flight ended with %v, want context.Canceled", err)
		}
	})
	t.Run("flight survives while another caller waits", func(t *testing.T) {
		d := newDedup(time.Now, nil, time.Minute, 10)
		release := make(chan struct{})
		started := make(chan struct{})
		fn := func(ctx context.Context, _ func(resilience.Event)) (*resilience.Result, error) {
			close(started)
			select {
			case <-release:
				return &resilience.Result{Target: "a/b"}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ctx1, cancel1 := context.WithCancel(context.Background())
		first := make(chan error, 1)
		go func() { _, err := d.do(ctx1, "k", 0, nil, fn); first <- err }()
		<-started
		second := make(chan *resilience.Result, 1)
		go func() { r, _ := d.do(context.Background(), "k", 0, nil, fn); second <- r }()
		// Wait until the second caller has joined the flight.
		for deadline := time.Now().Add(10 * time.Second); ; {
			d.mu.Lock()
			w := d.flights["k"].waiters
			d.mu.Unlock()
			if w == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the second caller never joined the flight (%d waiters)", w)
			}
			time.Sleep(time.Millisecond)
		}
		cancel1()
		<-first
		close(release)
		if r := <-second; r == nil || r.Target != "a/b" {
			t.Errorf("second caller got %+v, want the flight's result", r)
		}
	})
}

// TestDedupIsBounded: the stored answers never outgrow CacheEntries; which
// one goes when the cache is full is otter's choice (its admission policy,
// not the oldest first).
func TestDedupIsBounded(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	d := newDedup(clk.Now, nil, time.Hour, 2)
	fn := func(ctx context.Context, _ func(resilience.Event)) (*resilience.Result, error) {
		return &resilience.Result{}, nil
	}
	for _, k := range []string{"a", "b", "c"} {
		d.do(context.Background(), k, 0, nil, fn)
		clk.Add(time.Second)
	}
	d.cache.CleanUp() // otter evicts in its maintenance; run it now
	if d.cache.EstimatedSize() != 2 {
		t.Fatalf("cache holds %d entries, want 2", d.cache.EstimatedSize())
	}
}

func TestDedupPerRouteTTL(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	d := newDedup(clk.Now, nil, time.Hour, 10)
	var runs int
	fn := func(ctx context.Context, _ func(resilience.Event)) (*resilience.Result, error) {
		runs++
		return &resilience.Result{}, nil
	}
	for _, tc := range []struct {
		advance time.Duration
		cached  bool
	}{{0, false}, {time.Second, true}, {2 * time.Second, false}} {
		clk.Add(tc.advance)
		r, _ := d.do(context.Background(), "k", 2*time.Second, nil, fn)
		if r.Cached != tc.cached {
			t.Errorf("after +%s: cached=%v, want %v", tc.advance, r.Cached, tc.cached)
		}
	}
	if _, _ = d.do(context.Background(), "n", -1, nil, fn); d.cache.EstimatedSize() != 1 {
		t.Errorf("ttl < 0 stored a result")
	}
}
