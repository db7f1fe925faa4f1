package memstore

import (
	"context"
	"sync"
	"time"
)

// Bounds of a Results store.
const (
	// MaxResults bounds the results and claims a Results store keeps.
	MaxResults = 10_000
	// MaxResultBytes bounds their bytes; a result larger than an eighth
	// of it is not stored.
	MaxResultBytes = 64 << 20
)

// Results is the in-process state.ResultStore: a map of results and
// claims, each with its expiry, under one mutex. Past MaxResults entries
// or MaxResultBytes it drops the expired ones, then refuses new claims
// (the call then runs undeduplicated) and new results. It starts no
// goroutine. Results is safe for concurrent use; use NewResults to create
// one (the zero value is not usable).
type Results struct {
	mu    sync.Mutex
	m     map[string]*resultEntry
	bytes int64
}

type resultEntry struct {
	val     []byte // nil: a claim
	expires time.Time
}

// NewResults returns an empty Results store.
func NewResults() *Results { return &Results{m: make(map[string]*resultEntry)} }

// live returns the unexpired entry at key (dropping an expired one). r.mu is held.
func (r *Results) live(key string, now time.Time) *resultEntry {
	e, ok := r.m[key]
	if ok && !now.Before(e.expires) {
		r.drop(key, e)
		return nil
	}
	return e
}

func (r *Results) drop(key string, e *resultEntry) {
	r.bytes -= int64(len(key) + len(e.val))
	delete(r.m, key)
}

// room reports whether an entry of n bytes fits, sweeping expired entries
// when it does not. r.mu is held.
func (r *Results) room(n int, now time.Time) bool {
	fits := func() bool { return len(r.m) < MaxResults && r.bytes+int64(n) <= MaxResultBytes }
	if fits() {
		return true
	}
	for k, e := range r.m {
		if !now.Before(e.expires) {
			r.drop(k, e)
		}
	}
	return fits()
}

// Claim implements state.ResultStore. A full store grants the claim
// without recording it.
func (r *Results) Claim(_ context.Context, key string, ttl time.Duration) ([]byte, bool, error) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.live(key, now); e != nil {
		return e.val, false, nil
	}
	if r.room(len(key), now) {
		r.m[key] = &resultEntry{expires: now.Add(ttl)}
		r.bytes += int64(len(key))
	}
	return nil, true, nil
}

// Publish implements state.ResultStore.
func (r *Results) Publish(_ context.Context, key string, result []byte, ttl time.Duration) error {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.live(key, now); e != nil {
		r.drop(key, e)
	}
	if result == nil {
		result = []byte{}
	}
	if len(key)+len(result) <= MaxResultBytes/8 && r.room(len(key)+len(result), now) {
		r.m[key] = &resultEntry{val: result, expires: now.Add(ttl)}
		r.bytes += int64(len(key) + len(result))
	}
	return nil
}

// Release implements state.ResultStore.
func (r *Results) Release(_ context.Context, key string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.m[key]; ok && e.val == nil {
		r.drop(key, e)
	}
	return nil
}

// Result implements state.ResultStore.
func (r *Results) Result(_ context.Context, key string) ([]byte, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.live(key, time.Now())
	if e == nil {
		return nil, false, nil
	}
	return e.val, e.val == nil, nil
}
