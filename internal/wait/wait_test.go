package wait_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/internal/wait"
)

func TestFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := wait.For(context.Background(), 3*time.Second); err != nil {
			t.Fatalf("For: %v", err)
		}
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("waited %v, want 3s", got)
		}
	})
}

func TestForCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		if err := wait.For(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("For = %v, want the deadline", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("waited %v, want 1s", got)
		}
	})
}

func TestForNothing(t *testing.T) {
	if err := wait.For(context.Background(), 0); err != nil {
		t.Errorf("For(0) = %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := wait.For(ctx, -time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("For(done, -1s) = %v, want context.Canceled", err)
	}
	if err := wait.For(ctx, time.Hour); err != context.Canceled {
		t.Errorf("For(done, 1h) = %v, want context.Canceled", err)
	}
}

func TestUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		at := time.Now().Add(90 * time.Second)
		if err := wait.Until(context.Background(), at); err != nil {
			t.Fatalf("Until: %v", err)
		}
		if !time.Now().Equal(at) {
			t.Errorf("woke at %v, want %v", time.Now(), at)
		}
		if err := wait.Until(context.Background(), at.Add(-time.Minute)); err != nil {
			t.Errorf("Until(past) = %v, want nil", err)
		}
	})
}

// TestEvery: fn runs once a period until stop, which returns only after
// the last fn has returned; a done context ends the ticks too.
func TestEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ticks []time.Duration
		start := time.Now()
		stop := wait.Every(context.Background(), time.Second, func() {
			time.Sleep(100 * time.Millisecond) // a slow fn: stop must wait for it
			ticks = append(ticks, time.Since(start))
		})
		time.Sleep(3050 * time.Millisecond) // in the third fn
		stop()
		want := []time.Duration{1100 * time.Millisecond, 2100 * time.Millisecond, 3100 * time.Millisecond}
		if !slices.Equal(ticks, want) {
			t.Errorf("fn returned at %v, want %v", ticks, want)
		}
		time.Sleep(time.Hour)
		if len(ticks) != 3 {
			t.Errorf("%d calls after stop, want none", len(ticks)-3)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
		defer cancel()
		n := 0
		stop := wait.Every(ctx, time.Second, func() { n++ })
		time.Sleep(time.Hour)
		stop() // long after the context ended the ticks
		if n != 2 {
			t.Errorf("%d calls, want the 2 before the context ended", n)
		}
	})
}
