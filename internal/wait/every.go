package wait

import (
	"context"
	"time"
)

// Every calls fn every d (d > 0, as for time.NewTicker) on a goroutine of
// its own until ctx is done or stop is called. stop, to be called once,
// returns when fn has returned for the last time: the live views' redraws
// and a long call's keep-alive progress notifications.
func Every(ctx context.Context, d time.Duration, fn func()) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				fn()
			case <-quit:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { close(quit); <-done }
}
