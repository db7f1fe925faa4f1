package state

import "context"

// Pipelined is a Store whose every call costs a round trip to a server
// (redisstore): it reads several records in one trip, and applies the
// updates a caller need not wait for off the caller's path. The engine
// uses these methods when its Store has them, and Breaker and
// UpdateBreaker otherwise.
type Pipelined interface {
	Store
	// Breakers returns the records at keys, in the order of keys (the zero
	// Breaker where none), as Breaker would one by one.
	Breakers(ctx context.Context, keys []string) ([]Breaker, error)
	// UpdateBreakerLater applies fn to the record at key as UpdateBreaker
	// does, soon but possibly after it returns; updates of one key asked
	// meanwhile may be applied in one write, in the order asked. done, when
	// not nil, is called once the update is stored (or failed) with the
	// error UpdateBreaker would have returned. Close waits for the updates
	// asked before it.
	UpdateBreakerLater(key string, fn func(b *Breaker) bool, done func(error))
}
