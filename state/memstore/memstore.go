// Package memstore is the in-process state.Store: a sharded map guarded by
// mutexes. It is llmguard's default store. Its records are bounded by count
// and bytes, and a record nobody touched for an hour expires (see Options):
// clients can name targets without end.
//
//	st := memstore.New()
//	opts := cfg.EngineOptions()
//	opts.Adapters, opts.Store = ads, st
//	eng, err := resilience.New(opts)
package memstore

import (
	"context"
	"hash/maphash"
	"sync"
	"time"

	"github.com/llmguard/llmguard/state"
)

const shards = 16

// Store is an in-memory state.Store. It is safe for concurrent use; use New
// to create one (the zero value is not usable).
type Store struct {
	seed   maphash.Seed
	lim    limits
	shards [shards]shard
}

type shard struct {
	mu    sync.Mutex
	m     map[string]*entry
	bytes int64
	// scratch is UpdateBreaker's copy of a record for fn (under mu).
	scratch state.Breaker
}

// New returns an empty Store with the default bounds.
func New() *Store { return NewWith(nil) }

// NewWith returns an empty Store bounded by o (nil = the defaults).
func NewWith(o *Options) *Store {
	s := &Store{seed: maphash.MakeSeed(), lim: o.limits()}
	for i := range s.shards {
		s.shards[i].m = make(map[string]*entry)
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
	defer sh.mu.Unlock()
	e := s.live(sh, key, time.Now())
	if e == nil {
		return state.Breaker{}, nil
	}
	return e.b, nil
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
	now := time.Now()
	e := s.live(sh, key, now)
	// fn's copy of the record is the shard's scratch record (sh.mu is held
	// and fn keeps nothing of its argument), not one on the heap per call.
	b := &sh.scratch
	*b = b0(e)
	if !fn(b) {
		return b0(e), nil
	}
	s.put(sh, key, *b, now)
	return *b, nil
}

// Len is the number of records the store holds (at most its MaxRecords).
// It is safe for concurrent use.
func (s *Store) Len() int {
	return len(s.keys())
}

// keys lists the keys that have a record.
func (s *Store) keys() []string {
	var keys []string
	now := time.Now()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for k, e := range sh.m {
			if !s.expired(e, now) {
				keys = append(keys, k)
			}
		}
		sh.mu.Unlock()
	}
	return keys
}

var _ state.Store = (*Store)(nil)
