package redisstore

import (
	"testing"
	"time"
)

// RoundTrips returns the round trips s made to the server on callers'
// paths and after them (UpdateBreakerLater's writes), once the writes
// asked so far are done.
func RoundTrips(tb testing.TB, s *Store) (onPath, later int64) {
	tb.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Microsecond) {
		s.later.mu.Lock()
		n := len(s.later.pending)
		s.later.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d keys' updates still unwritten after 5s", n)
		}
	}
	return s.trips.Load(), s.laterTrips.Load()
}
