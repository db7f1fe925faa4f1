package redisstore

import (
	"context"

	"github.com/redis/rueidis"

	"github.com/llmguard/llmguard/state"
)

// itemKey is where the item at key lives; the hash tag spreads items over
// a Cluster's slots by their own key.
func (s *Store) itemKey(key string) string {
	return s.opt.Prefix + schema + "item:{" + key + "}"
}

// PutItems stores items, each for ItemTTL; one weighing more than
// MaxItemBytes is left out. Each item is one SET, pipelined.
func (s *Store) PutItems(ctx context.Context, items []state.Item) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c, l := s.use()
	if c == nil {
		return l.items.PutItems(ctx, items)
	}
	cmds := make(rueidis.Commands, 0, len(items))
	for _, it := range items {
		if len(it.Key)+len(it.Value) > s.opt.MaxItemBytes {
			continue
		}
		cmds = append(cmds, c.B().Set().Key(s.itemKey(it.Key)).Value(rueidis.BinaryString(it.Value)).
			Px(s.opt.ItemTTL).Build())
	}
	if len(cmds) == 0 {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
	defer cancel()
	var err error
	for _, r := range c.DoMulti(cctx, cmds...) {
		if e := r.Error(); e != nil && err == nil {
			err = e
		}
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	s.fail(err)
	return s.locally().items.PutItems(ctx, items)
}

// GetItems returns the values at keys (nil where none), renewing each
// one's ItemTTL (GETEX, pipelined).
func (s *Store) GetItems(ctx context.Context, keys []string) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]byte, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	c, l := s.use()
	if c == nil {
		return l.items.GetItems(ctx, keys)
	}
	cmds := make(rueidis.Commands, len(keys))
	for i, k := range keys {
		cmds[i] = c.B().Getex().Key(s.itemKey(k)).Px(s.opt.ItemTTL).Build()
	}
	cctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
	defer cancel()
	var err error
	for i, r := range c.DoMulti(cctx, cmds...) {
		v, e := r.AsBytes()
		switch {
		case e == nil:
			out[i] = v
		case rueidis.IsRedisNil(e):
		case err == nil:
			err = e
		}
	}
	if err == nil {
		return out, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	s.fail(err)
	return s.locally().items.GetItems(ctx, keys)
}
