package memstore

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/state"
)

// Defaults for ItemOptions fields left zero.
const (
	DefaultMaxItems     = 100_000
	DefaultMaxItemBytes = 64 << 20
	DefaultItemTTL      = time.Hour
)

// itemCost is what an item weighs besides its key and value (its list
// element, map entry and headers, roughly).
const itemCost = 160

// ItemOptions bounds an Items store. Every zero field means its default.
type ItemOptions struct {
	// MaxItems bounds the items kept (0 = DefaultMaxItems).
	MaxItems int
	// MaxBytes bounds the items' keys and values (their capacity) plus a
	// fixed cost per item (0 = DefaultMaxItemBytes). An item weighing more
	// than an eighth of it is not stored.
	MaxBytes int64
	// IdleTTL is how long an item nobody reads or writes is kept
	// (0 = DefaultItemTTL).
	IdleTTL time.Duration
}

// Items is the in-process state.ItemStore: a map and a least-recently-used
// list under one mutex. Past a bound it drops the items used longest ago,
// which, all items having the same idle TTL, are also the first to expire:
// the newest item (the answer a client's next turn references) is always
// kept. It starts no goroutine. Items is safe for concurrent use; use
// NewItems to create one (the zero value is not usable).
//
// It is not an otter cache like the tree's other local caches: W-TinyLFU
// admits a new entry only if it is used more often than the one it would
// evict, so a full store may refuse exactly the answer the next turn
// references (see TestItemsKeepNewest).
type Items struct {
	lim   ItemOptions
	mu    sync.Mutex
	m     map[string]*list.Element // of *itemEntry
	lru   list.List                // front: used last
	bytes int64
}

type itemEntry struct {
	key  string
	val  []byte
	size int64
	used time.Time
}

// NewItems returns an empty Items store bounded by o (nil = the defaults).
func NewItems(o *ItemOptions) *Items {
	v := defaults.Copy(o)
	v.MaxItems = orDefault(v.MaxItems, DefaultMaxItems)
	v.MaxBytes = orDefault(v.MaxBytes, DefaultMaxItemBytes)
	v.IdleTTL = orDefault(v.IdleTTL, DefaultItemTTL)
	s := &Items{lim: v, m: make(map[string]*list.Element)}
	s.lru.Init()
	return s
}

// PutItems stores items; one weighing more than an eighth of MaxBytes is
// left out. Values must not be modified afterwards.
func (s *Items) PutItems(ctx context.Context, items []state.Item) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range items {
		size := int64(len(it.Key)+cap(it.Value)) + itemCost
		if size > s.lim.MaxBytes/8 {
			continue
		}
		if el := s.m[it.Key]; el != nil {
			e := el.Value.(*itemEntry)
			s.bytes += size - e.size
			e.val, e.size, e.used = it.Value, size, now
			s.lru.MoveToFront(el)
		} else {
			s.m[it.Key] = s.lru.PushFront(&itemEntry{key: it.Key, val: it.Value, size: size, used: now})
			s.bytes += size
		}
	}
	for s.lru.Len() > s.lim.MaxItems || s.bytes > s.lim.MaxBytes {
		s.drop(s.lru.Back())
	}
	s.expire(now)
	return nil
}

// GetItems returns the values at keys (nil where none); callers must not
// modify them.
func (s *Items) GetItems(ctx context.Context, keys []string) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([][]byte, len(keys))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	for i, k := range keys {
		if el := s.m[k]; el != nil {
			e := el.Value.(*itemEntry)
			e.used = now
			s.lru.MoveToFront(el)
			out[i] = e.val
		}
	}
	return out, nil
}

// Size returns how many items the store holds and what they weigh against
// MaxBytes, expired ones dropped first.
func (s *Items) Size() (items int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(time.Now())
	return s.lru.Len(), s.bytes
}

// expire drops the items idle for longer than IdleTTL: they are at the
// back of the list. s.mu is held.
func (s *Items) expire(now time.Time) {
	for el := s.lru.Back(); el != nil && now.Sub(el.Value.(*itemEntry).used) > s.lim.IdleTTL; el = s.lru.Back() {
		s.drop(el)
	}
}

// drop removes el. s.mu is held.
func (s *Items) drop(el *list.Element) {
	e := el.Value.(*itemEntry)
	s.lru.Remove(el)
	delete(s.m, e.key)
	s.bytes -= e.size
}
