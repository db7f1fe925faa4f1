package memstore

import (
	"context"
	"sync"
	"time"
)

// MaxLeaseKeys bounds the keys a Leases store holds leases on.
const MaxLeaseKeys = 10_000

// Leases is the in-process state.LeaseStore: each key's leases and their
// expiry in a map under one mutex. A key whose leases all ended is
// dropped; past MaxLeaseKeys keys with leases it sweeps the expired ones,
// then grants a lease on a new key without recording it (the caller's own
// limit in process still holds). It starts no goroutine. Leases is safe
// for concurrent use; use NewLeases to create one (the zero value is not
// usable).
type Leases struct {
	mu sync.Mutex
	m  map[string]map[string]time.Time // key → lease → expiry
}

// NewLeases returns an empty Leases store.
func NewLeases() *Leases { return &Leases{m: make(map[string]map[string]time.Time)} }

// held returns key's unexpired leases, dropping the expired ones. l.mu is held.
func (l *Leases) held(key string, now time.Time) map[string]time.Time {
	ls := l.m[key]
	for id, exp := range ls {
		if !now.Before(exp) {
			delete(ls, id)
		}
	}
	if ls != nil && len(ls) == 0 {
		delete(l.m, key)
		return nil
	}
	return ls
}

// with runs fn on key's unexpired leases (nil when none) under l.mu.
func (l *Leases) with(ctx context.Context, key string, fn func(ls map[string]time.Time, now time.Time) bool) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	return fn(l.held(key, now), now), nil
}

// AcquireLease implements state.LeaseStore.
func (l *Leases) AcquireLease(ctx context.Context, key, id string, limit int, ttl time.Duration) (bool, error) {
	return l.with(ctx, key, func(ls map[string]time.Time, now time.Time) bool {
		if len(ls) >= limit {
			return false
		}
		if ls == nil {
			if len(l.m) >= MaxLeaseKeys {
				for k := range l.m {
					l.held(k, now)
				}
				if len(l.m) >= MaxLeaseKeys {
					return true
				}
			}
			ls = make(map[string]time.Time, limit)
			l.m[key] = ls
		}
		ls[id] = now.Add(ttl)
		return true
	})
}

// RenewLease implements state.LeaseStore.
func (l *Leases) RenewLease(ctx context.Context, key, id string, ttl time.Duration) (bool, error) {
	return l.with(ctx, key, func(ls map[string]time.Time, now time.Time) bool {
		if _, ok := ls[id]; !ok {
			return false
		}
		ls[id] = now.Add(ttl)
		return true
	})
}

// ReleaseLease implements state.LeaseStore.
func (l *Leases) ReleaseLease(_ context.Context, key, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls := l.m[key]; ls != nil {
		delete(ls, id)
		if len(ls) == 0 {
			delete(l.m, key)
		}
	}
	return nil
}
