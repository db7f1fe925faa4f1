package redisstore

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/llmguard/llmguard/state"
)

// leaseKey is where the leases on key live: a sorted set of lease names
// scored by their expiry (the server's clock, unix ms), hash-tagged so that
// a target's leases are in one Cluster slot.
func (s *Store) leaseKey(key string) []string {
	return []string{s.opt.Prefix + schema + "lease:{" + key + "}"}
}

// leaseNow is the prologue of the lease scripts: now by the server's
// clock, and the expired leases at KEYS[1] dropped.
const leaseNow = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
`

// leaseSet is the epilogue: lease ARGV[1] expires ARGV[2] ms from now, and
// the set with its last lease.
const leaseSet = `redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return 1`

// acquireScript takes lease ARGV[1] for ARGV[2] ms unless ARGV[3] other
// unexpired leases are held: 1 when it did, else 0.
var acquireScript = rueidis.NewLuaScript(leaseNow + `if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
` + leaseSet)

// renewScript extends lease ARGV[1] to ARGV[2] ms from now if it is held:
// 1 when it was, else 0.
var renewScript = rueidis.NewLuaScript(leaseNow + `if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
` + leaseSet)

// AcquireLease implements state.LeaseStore with one script, by the server's clock.
func (s *Store) AcquireLease(ctx context.Context, key, id string, limit int, ttl time.Duration) (bool, error) {
	var ok bool
	l, err := s.call(ctx, func(ctx context.Context, c rueidis.Client) error {
		n, err := acquireScript.Exec(ctx, c, s.leaseKey(key), []string{id, ms(ttl), strconv.Itoa(limit)}).AsInt64()
		ok = n == 1
		return err
	})
	if l != nil {
		return l.leases.AcquireLease(ctx, key, id, limit, ttl)
	}
	return ok, err
}

// RenewLease implements state.LeaseStore. A lease taken from local state while
// Redis was away renews there.
func (s *Store) RenewLease(ctx context.Context, key, id string, ttl time.Duration) (bool, error) {
	var ok bool
	l, err := s.call(ctx, func(ctx context.Context, c rueidis.Client) error {
		n, err := renewScript.Exec(ctx, c, s.leaseKey(key), []string{id, ms(ttl)}).AsInt64()
		ok = n == 1
		return err
	})
	if err != nil || ok {
		return ok, err
	}
	if l == nil {
		l = s.current()
	}
	return l.leases.RenewLease(ctx, key, id, ttl)
}

// ReleaseLease implements state.LeaseStore, in Redis and in local state (where
// a lease taken while Redis was away is).
func (s *Store) ReleaseLease(ctx context.Context, key, id string) error {
	l, err := s.call(ctx, func(ctx context.Context, c rueidis.Client) error {
		return c.Do(ctx, c.B().Zrem().Key(s.leaseKey(key)[0]).Member(id).Build()).Error()
	})
	if l == nil {
		l = s.current()
	}
	l.leases.ReleaseLease(ctx, key, id)
	return err
}

// current is the local state, without counting a fallback.
func (s *Store) current() *local {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.local
}

var _ state.LeaseStore = (*Store)(nil)
