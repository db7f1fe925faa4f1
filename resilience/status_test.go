package resilience

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestStatusInFlightQueued: Status counts the attempts holding a slot and
// the calls waiting for one; both return to zero when the calls end.
func TestStatusInFlightQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1"), MaxConcurrency: 1, QueueTimeout: 10 * time.Second},
		}, nil)
		gate := make(chan struct{})
		h.ads["a"].on("m1", reply{block: gate}, reply{})
		done := make(chan error, 2)
		for range 2 {
			go func() { _, err := h.chat("default"); done <- err }()
		}
		synctest.Wait()
		status := func() TargetStatus {
			for _, s := range h.eng.Status() {
				if s.Target == "a/m1" {
					return s
				}
			}
			t.Fatal("no status for a/m1")
			return TargetStatus{}
		}
		if s := status(); s.InFlight != 1 || s.Queued != 1 {
			t.Errorf("while one call runs and one waits: in flight %d, queued %d; want 1, 1", s.InFlight, s.Queued)
		}
		close(gate)
		for range 2 {
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
		if s := status(); s.InFlight != 0 || s.Queued != 0 {
			t.Errorf("after the calls: in flight %d, queued %d; want 0, 0", s.InFlight, s.Queued)
		}
	})
}

// TestEventElapsed: an attempt's success and failure events say how long
// it took.
func TestEventElapsed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1", "b/m2"), Retry: Retry{MaxAttempts: 1}}}, nil)
		h.ads["a"].on("m1", reply{err: errServer, delay: 3 * time.Second})
		h.ads["b"].on("m2", reply{delay: 2 * time.Second})
		if _, err := h.chat("default"); err != nil {
			t.Fatal(err)
		}
		want := map[EventKind]time.Duration{EventFailure: 3 * time.Second, EventSuccess: 2 * time.Second}
		for _, e := range h.events {
			if w, ok := want[e.Kind]; ok && e.Elapsed != w {
				t.Errorf("%s event on %s: Elapsed %s, want %s", e.Kind, e.Target, e.Elapsed, w)
			}
		}
	})
}
