// Package memstore is the in-process state.Store: a sharded map guarded by
// mutexes. It is llmguard's default store.
//
//	st := memstore.New()
//	eng, err := resilience.New(resilience.Options{Config: cfg, Adapters: ads, Store: st})
package memstore

import (
	"context"
	"hash/maphash"
	"sync"

	"github.com/llmguard/llmguard/state"
)

const shards = 16

// Store is an in-memory state.Store. It is safe for concurrent use; use New
// to create one (the zero value is not usable).
type Store struct {
	seed   maphash.Seed
	shards [shards]shard
}

type shard struct {
	mu sync.Mutex
	m  map[string]state.Breaker
}

// New returns an empty Store.
func New() *Store {
	s := &Store{seed: maphash.MakeSeed()}
	for i := range s.shards {
		s.shards[i].m = make(map[string]state.Breaker)
	}
	return s
}

func (s *Store) shard(key string) *shard {
	return &s.shards[maphash.String(s.seed, key)%shards]
}

// Breaker returns the record at key, or the zero Breaker.
func (s *Store) Breaker(ctx context.Context, key string) (state.Breaker, error) {
	if err := ctx.Err(); err != nil {
		return state.Breaker{}, err
	}
	sh := s.shard(key)
	sh.mu.Lock()
	b := sh.m[key]
	sh.mu.Unlock()
	return b, nil
}

// UpdateBreaker applies fn to a copy of the record at key under the key's
// shard lock, and stores the copy when fn returns true.
func (s *Store) UpdateBreaker(ctx context.Context, key string, fn func(b *state.Breaker) bool) (state.Breaker, error) {
	if err := ctx.Err(); err != nil {
		return state.Breaker{}, err
	}
	sh := s.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	b := sh.m[key]
	if fn(&b) {
		sh.m[key] = b
		return b, nil
	}
	return sh.m[key], nil
}

// BreakerKeys lists the keys that have a record.
func (s *Store) BreakerKeys(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var keys []string
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for k := range sh.m {
			keys = append(keys, k)
		}
		sh.mu.Unlock()
	}
	return keys, nil
}

var _ state.Store = (*Store)(nil)
