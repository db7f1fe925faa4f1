package redisstore

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/llmguard/llmguard/state"
)

// resultKeys are where the result and the claim at key live; one hash tag,
// so both are in one Cluster slot and a script may touch them together.
func (s *Store) resultKeys(key string) []string {
	p := s.opt.Prefix + schema
	return []string{p + "result:{" + key + "}", p + "claim:{" + key + "}"}
}

// claimScript answers {1, result} when a result is stored at KEYS[1], else
// claims KEYS[2] for ARGV[1] ms unless it is claimed: {2} when it took the
// claim, {0} when another holds it.
var claimScript = rueidis.NewLuaScript(`local r = redis.call('GET', KEYS[1])
if r then return {1, r} end
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1]) then return {2} end
return {0}`)

// publishScript stores ARGV[1] at KEYS[1] for ARGV[2] ms and ends the claim.
var publishScript = rueidis.NewLuaScript(`redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('DEL', KEYS[2])
return 1`)

// call runs fn with the client and a context bounded by Timeout; on a
// failure of Redis (not of ctx) it begins an outage and reports fallback,
// so the caller serves the call from local state.
func (s *Store) call(ctx context.Context, fn func(ctx context.Context, c rueidis.Client) error) (l *local, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, l := s.use()
	if c == nil {
		return l, nil
	}
	cctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
	defer cancel()
	if err = fn(cctx, c); err == nil {
		return nil, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	s.fail(err)
	return s.locally(), nil
}

// Claim implements state.ResultStore with one script (EVALSHA, loaded on
// first use).
func (s *Store) Claim(ctx context.Context, key string, ttl time.Duration) (result []byte, claimed bool, err error) {
	l, err := s.call(ctx, func(ctx context.Context, c rueidis.Client) error {
		vals, err := claimScript.Exec(ctx, c, s.resultKeys(key), []string{ms(ttl)}).ToArray()
		if err != nil {
			return err
		}
		code, err := vals[0].AsInt64()
		if err != nil {
			return err
		}
		switch code {
		case 1:
			result, err = vals[1].AsBytes()
			return err
		case 2:
			claimed = true
		}
		return nil
	})
	if l != nil {
		return l.results.Claim(ctx, key, ttl)
	}
	return result, claimed, err
}

// Publish implements state.ResultStore. A result weighing more than
// MaxItemBytes is not stored (the claim still ends).
func (s *Store) Publish(ctx context.Context, key string, result []byte, ttl time.Duration) error {
	if len(key)+len(result) > s.opt.MaxItemBytes {
		return s.Release(ctx, key)
	}
	l, err := s.call(ctx, func(ctx context.Context, c rueidis.Client) error {
		return publishScript.Exec(ctx, c, s.resultKeys(key), []string{string(result), ms(ttl)}).Error()
	})
	if l != nil {
		return l.results.Publish(ctx, key, result, ttl)
	}
	return err
}

// Release implements state.ResultStore.
func (s *Store) Release(ctx context.Context, key string) error {
	l, err := s.call(ctx, func(ctx context.Context, c rueidis.Client) error {
		return c.Do(ctx, c.B().Del().Key(s.resultKeys(key)[1]).Build()).Error()
	})
	if l != nil {
		return l.results.Release(ctx, key)
	}
	return err
}

// Result implements state.ResultStore: the result and the claim's
// existence, pipelined.
func (s *Store) Result(ctx context.Context, key string) (result []byte, inFlight bool, err error) {
	l, err := s.call(ctx, func(ctx context.Context, c rueidis.Client) error {
		ks := s.resultKeys(key)
		rs := c.DoMulti(ctx, c.B().Get().Key(ks[0]).Build(), c.B().Exists().Key(ks[1]).Build())
		v, err := rs[0].AsBytes()
		switch {
		case err == nil:
			result = v
		case !rueidis.IsRedisNil(err):
			return err
		}
		n, err := rs[1].AsInt64()
		inFlight = n > 0
		return err
	})
	if l != nil {
		return l.results.Result(ctx, key)
	}
	return result, inFlight, err
}

func ms(d time.Duration) string { return strconv.FormatInt(max(d.Milliseconds(), 1), 10) }

var _ state.ResultStore = (*Store)(nil)
