package mcpcall

import (
	"context"
	"time"

	"github.com/maypok86/otter/v2"
)

// Store keeps a Group's results by key, each for its TTL. It may drop any
// result at any time (a bound reached, a restart); a Group treats a
// missing result, and an error, as "not stored". Implementations are safe
// for concurrent use.
type Store[V any] interface {
	// Get returns the result stored at key, and whether there was one.
	Get(ctx context.Context, key string) (v V, ok bool, err error)
	// Set stores v at key for ttl (> 0).
	Set(ctx context.Context, key string, v V, ttl time.Duration) error
}

// DefaultCacheEntries bounds a Cache when NewCache is given no bound.
const DefaultCacheEntries = 1000

// Cache is the in-memory Store: an otter cache bounded by a number of
// entries (otter chooses what to evict when it is full), each expiring
// after its TTL. Safe for concurrent use.
type Cache[V any] struct {
	c *otter.Cache[string, cached[V]]
}

type cached[V any] struct {
	v   V
	ttl time.Duration
}

// wallClock is time.Now as otter reads it; it never ticks (no goroutine for
// proactive expiry: an expired entry is gone when read, and otter's
// maintenance removes it on the next writes). Tests get virtual time from
// testing/synctest.
type wallClock struct{}

func (wallClock) NowNano() int64                      { return time.Now().UnixNano() }
func (wallClock) Tick(time.Duration) <-chan time.Time { return nil }

// NewCache returns a Cache of at most maxEntries results (<= 0 =
// DefaultCacheEntries).
func NewCache[V any](maxEntries int) *Cache[V] {
	if maxEntries <= 0 {
		maxEntries = DefaultCacheEntries
	}
	return &Cache[V]{c: otter.Must(&otter.Options[string, cached[V]]{
		MaximumSize:      maxEntries,
		ExpiryCalculator: otter.ExpiryWritingFunc(func(e otter.Entry[string, cached[V]]) time.Duration { return e.Value.ttl }),
		Clock:            wallClock{},
	})}
}

// Get returns the result at key while it has not expired.
func (c *Cache[V]) Get(_ context.Context, key string) (V, bool, error) {
	e, ok := c.c.GetIfPresent(key)
	return e.v, ok, nil
}

// Set stores v at key for ttl.
func (c *Cache[V]) Set(_ context.Context, key string, v V, ttl time.Duration) error {
	c.c.Set(key, cached[V]{v: v, ttl: ttl})
	return nil
}
