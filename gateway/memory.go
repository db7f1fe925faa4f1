package gateway

import (
	"runtime/debug"
	"sync"
	"time"
)

// A burst of large requests leaves its garbage on the heap until the next
// collection, which an idle process may not run for two minutes (the
// runtime's forced GC), and the runtime returns freed memory to the system
// only gradually after that: memory stayed at the burst's level for
// minutes. So the server keeps no buffer above maxPooled, and reclaimAfter
// after the last request body above it (when a burst has ended) it runs
// one collection that returns free memory to the system.

// reclaimAfter is how long after the last large request body the server
// returns free memory to the system.
const reclaimAfter = 5 * time.Second

// reclaimer runs free once reclaimAfter has passed since the last call of
// large. It is safe for concurrent use; the zero value is not usable.
type reclaimer struct {
	mu    sync.Mutex
	timer *time.Timer
	free  func() // debug.FreeOSMemory; tests swap it
}

func newReclaimer() *reclaimer { return &reclaimer{free: debug.FreeOSMemory} }

// large notes a request body of n bytes: one above maxPooled (re)starts the
// countdown.
func (r *reclaimer) large(n int) {
	if n <= maxPooled {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer == nil {
		r.timer = time.AfterFunc(reclaimAfter, func() { r.free() })
		return
	}
	r.timer.Reset(reclaimAfter)
}
