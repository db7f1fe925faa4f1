package redisstore

import (
	"context"
	"sync"

	"github.com/redis/rueidis"

	"github.com/llmguard/llmguard/state"
)

// Pipelining: what keeps Redis off a call's path. A call's records are
// read in one round trip (Breakers: one GET per record, pipelined; a
// Cluster's nodes are asked at once), and the updates the engine need not
// wait for (a success's count, an answer's rate-limit announcement) are
// written by a goroutine per key after the call returns, all those asked
// meanwhile in one compare-and-set (UpdateBreakerLater).

// maxLater bounds the updates of one key waiting for their write: past it,
// an update is written at once, on the caller's path.
const maxLater = 256

// laterQueue holds the updates waiting for their write, by key; a key is
// in pending while its goroutine writes (with nil when none wait).
type laterQueue struct {
	mu      sync.Mutex
	closed  bool
	pending map[string][]laterUpdate
}

type laterUpdate struct {
	fn   func(b *state.Breaker) bool
	done func(error)
}

// Breakers returns the records at keys (the zero Breaker where none), read
// in one round trip.
func (s *Store) Breakers(ctx context.Context, keys []string) ([]state.Breaker, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]state.Breaker, len(keys))
	c, l := s.use()
	if c == nil {
		return localBreakers(ctx, l, keys, out)
	}
	cmds := make(rueidis.Commands, len(keys))
	for i, k := range keys {
		cmds[i] = c.B().Get().Key(s.recordKey(k)).Build()
	}
	before := make([]uint64, len(keys))
	for i, k := range keys {
		before[i] = s.guessed[stripe(k)].Load()
	}
	cctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
	res := c.DoMulti(cctx, cmds...)
	cancel()
	err := s.decodeAll(keys, before, res, out)
	if err == nil {
		return out, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	s.fail(err)
	return localBreakers(ctx, s.locally(), keys, out)
}

// decodeAll decodes the answers to Breakers' GETs into out, keeping each
// as the replica's guess of what the server holds unless an update of the
// key (by stripe) left a guess since the read was sent (before): the read
// may have been answered before that update's write.
func (s *Store) decodeAll(keys []string, before []uint64, res []rueidis.RedisResult, out []state.Breaker) error {
	for i, r := range res {
		raw, err := r.ToString()
		if rueidis.IsRedisNil(err) {
			raw, err = "", nil
		}
		if err != nil {
			return err
		}
		if s.guessed[stripe(keys[i])].Load() == before[i] {
			s.seen.Set(keys[i], raw)
		}
		if err := decode(raw, &out[i]); err != nil {
			return err
		}
	}
	return nil
}

func localBreakers(ctx context.Context, l *local, keys []string, out []state.Breaker) ([]state.Breaker, error) {
	for i, k := range keys {
		b, err := l.breakers.Breaker(ctx, k)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// UpdateBreakerLater applies fn to the record at key after it returns: a
// goroutine per key writes the updates asked meanwhile in one
// compare-and-set, each applied to its own copy in turn (so one that
// reports no change leaves nothing behind). It writes at once when
// maxLater updates of key wait already, or the store is closing.
func (s *Store) UpdateBreakerLater(key string, fn func(b *state.Breaker) bool, done func(error)) {
	q := &s.later
	q.mu.Lock()
	ups, running := q.pending[key]
	if q.closed || len(ups) >= maxLater {
		q.mu.Unlock()
		_, err := s.UpdateBreaker(context.Background(), key, fn)
		if done != nil {
			done(err)
		}
		return
	}
	if q.pending == nil {
		q.pending = make(map[string][]laterUpdate)
	}
	q.pending[key] = append(ups, laterUpdate{fn: fn, done: done})
	if !running {
		s.wg.Add(1)
		go s.writeLater(key)
	}
	q.mu.Unlock()
}

// laterCtx marks the round trips of writeLater, counted apart from those
// on a caller's path.
type laterCtx struct{}

// writeLater writes the updates of key waiting, until none wait.
func (s *Store) writeLater(key string) {
	defer s.wg.Done()
	ctx := context.WithValue(context.Background(), laterCtx{}, true)
	q := &s.later
	for {
		q.mu.Lock()
		ups := q.pending[key]
		if len(ups) == 0 {
			delete(q.pending, key)
			q.mu.Unlock()
			return
		}
		q.pending[key] = nil
		q.mu.Unlock()
		_, err := s.UpdateBreaker(ctx, key, func(b *state.Breaker) bool {
			changed := false
			for _, u := range ups {
				c := *b
				if u.fn(&c) {
					*b, changed = c, true
				}
			}
			return changed
		})
		for _, u := range ups {
			if u.done != nil {
				u.done(err)
			}
		}
	}
}

// counted is the client with its round trips counted: one per Do or
// DoMulti (a script's EVALSHA, and its EVAL when the server lacked it,
// are one each). It pins every command, so the client never recycles
// one: a command it sent again on a fresh connection (after Redis
// restarted) was otherwise put back in its pool while the dead
// connection's writer had still read it last (a data race).
type counted struct {
	rueidis.Client
	s *Store
}

func (c counted) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.s.count(ctx)
	return c.Client.Do(ctx, cmd.Pin())
}

func (c counted) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	c.s.count(ctx)
	for i := range cmds {
		cmds[i] = cmds[i].Pin()
	}
	return c.Client.DoMulti(ctx, cmds...)
}

func (s *Store) count(ctx context.Context) {
	if ctx.Value(laterCtx{}) != nil {
		s.laterTrips.Add(1)
		return
	}
	s.trips.Add(1)
}

var _ state.Pipelined = (*Store)(nil)
