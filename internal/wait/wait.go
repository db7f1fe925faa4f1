// Package wait is llmguard's one sleep that a context cuts short (For,
// Until): the mock's latency and keep-alive pacing and the demo's pauses
// use it; and its one repeating tick (Every). Code waits on real timers;
// tests get virtual time from testing/synctest.
package wait

import (
	"context"
	"time"
)

// For waits d or until ctx is done, whichever comes first. It returns nil
// after the full wait and ctx.Err() when ctx ended it first; d <= 0 returns
// ctx.Err() at once. It is safe for concurrent use.
func For(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Until is For up to the time t: it returns ctx.Err() at once when t has
// passed.
func Until(ctx context.Context, t time.Time) error {
	return For(ctx, time.Until(t))
}
