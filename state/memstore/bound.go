package memstore

import (
	"slices"
	"time"

	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/state"
)

// Defaults for Options fields left zero.
const (
	DefaultMaxRecords = 10000
	DefaultMaxBytes   = 16 << 20
	DefaultIdleTTL    = time.Hour
)

// Options bounds a Store. Every zero field means its default.
type Options struct {
	// MaxRecords bounds the records kept (0 = DefaultMaxRecords).
	MaxRecords int
	// MaxBytes bounds the records' keys and reasons plus a fixed cost per
	// record (0 = DefaultMaxBytes).
	MaxBytes int64
	// IdleTTL is how long a record nobody reads or writes is kept
	// (0 = DefaultIdleTTL). A record open or cooling down until later is kept
	// until then.
	IdleTTL time.Duration
}

// limits are the per-shard bounds.
type limits struct {
	records int
	bytes   int64
	ttl     time.Duration
}

func (o *Options) limits() limits {
	v := defaults.Copy(o)
	records, size := orDefault(v.MaxRecords, DefaultMaxRecords), orDefault(v.MaxBytes, DefaultMaxBytes)
	return limits{records: max(records/shards, 1), bytes: max(size/shards, 1), ttl: orDefault(v.IdleTTL, DefaultIdleTTL)}
}

// orDefault is v, or d when v is not positive: an options field's zero (or
// negative) value means its default.
func orDefault[T int | int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// recordCost is what a record weighs besides its key and strings.
const recordCost = 256

// recordSize is what the record at key weighs.
func recordSize(key string, b *state.Breaker) int64 {
	f := &b.Fault
	return int64(len(key)+len(b.State)+len(b.Reason)+len(f.Class)+len(f.ProviderType)+len(f.RequestID)+len(f.Message)) + recordCost
}

// entry is one stored record and when it was last read or written.
type entry struct {
	b    state.Breaker
	used time.Time
	size int64
}

func b0(e *entry) state.Breaker {
	if e == nil {
		return state.Breaker{}
	}
	return e.b
}

// busy reports whether the record must outlive its idle time: open, in
// a cooldown or a server-requested wait until later.
func busy(e *entry, now time.Time) bool {
	return e.b.OpenUntil.After(now) || e.b.CooldownUntil.After(now) || e.b.WaitUntil.After(now)
}

func (s *Store) expired(e *entry, now time.Time) bool {
	return now.Sub(e.used) > s.lim.ttl && !busy(e, now)
}

// live returns the record at key, marking it used, or nil (deleting it
// when it expired). The caller holds sh.mu.
func (s *Store) live(sh *shard, key string, now time.Time) *entry {
	e := sh.m[key]
	if e == nil {
		return nil
	}
	if s.expired(e, now) {
		s.drop(sh, key, e)
		return nil
	}
	e.used = now
	return e
}

// put stores b at key, then evicts when the shard is over its bounds. The
// caller holds sh.mu.
func (s *Store) put(sh *shard, key string, b state.Breaker, now time.Time) {
	size := recordSize(key, &b)
	if e := sh.m[key]; e != nil {
		sh.bytes += size - e.size
		e.b, e.used, e.size = b, now, size
	} else {
		sh.m[key] = &entry{b: b, used: now, size: size}
		sh.bytes += size
	}
	if len(sh.m) > s.lim.records || sh.bytes > s.lim.bytes {
		s.evict(sh, key, now)
	}
}

// evict brings the shard down to 7/8 of its bounds in one pass, so a flood
// of new keys costs a scan per eighth of the shard, not per key: expired
// records first, then the least recently used that are neither open nor
// cooling down, then the least recently used. It never evicts keep.
func (s *Store) evict(sh *shard, keep string, now time.Time) {
	type cand struct {
		k string
		e *entry
	}
	var quiet, busyOnes []cand
	for k, e := range sh.m {
		switch {
		case k == keep:
		case s.expired(e, now):
			s.drop(sh, k, e)
		case busy(e, now):
			busyOnes = append(busyOnes, cand{k, e})
		default:
			quiet = append(quiet, cand{k, e})
		}
	}
	records, bytes := s.lim.records-s.lim.records/8, s.lim.bytes-s.lim.bytes/8
	for _, cs := range [][]cand{quiet, busyOnes} {
		slices.SortFunc(cs, func(a, b cand) int { return a.e.used.Compare(b.e.used) })
		for _, c := range cs {
			if len(sh.m) <= records && sh.bytes <= bytes {
				return
			}
			s.drop(sh, c.k, c.e)
		}
	}
}

func (s *Store) drop(sh *shard, key string, e *entry) {
	delete(sh.m, key)
	sh.bytes -= e.size
}
