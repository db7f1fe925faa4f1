package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/redis/rueidis"
	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
)

// Defaults for Options fields left zero.
const (
	DefaultTimeout = 50 * time.Millisecond
	DefaultPrefix  = "llmguard:"
	DefaultIdleTTL = memstore.DefaultIdleTTL
	DefaultItemTTL = memstore.DefaultItemTTL
)

// schema versions the key layout and the record encoding: a change to
// either takes a new one, so replicas of two versions never read each
// other's records.
const schema = "v1:"

// Bounds of the last-seen cache: the records this replica last read or
// wrote, the compare-and-set's first guess of what the server holds.
const (
	seenEntries = 4096
	seenTTL     = time.Minute
)

// stripeSeed picks a key's stripe of Store.keyLocks.
var stripeSeed = maphash.MakeSeed()

// maxTries bounds the compare-and-set retries of one UpdateBreaker.
const maxTries = 64

// Options configures a Store. Every zero field means its default.
type Options struct {
	// URL names the server: redis:// or rediss:// (TLS), valkey:// or
	// valkeys://, with ?addr=host:port for more seed addresses (a Cluster
	// is recognised by itself) and ?master_set=name for Sentinel (the URL's
	// addresses are then the sentinels'). Required.
	URL string
	// Timeout bounds each call to the server (0 = DefaultTimeout, 50ms): a
	// call that takes longer is served from local state.
	Timeout time.Duration
	// Prefix starts every key the store writes (0 = DefaultPrefix).
	Prefix string
	// IdleTTL is how long a breaker record nobody writes is kept
	// (0 = DefaultIdleTTL); one open or cooling down until later is kept
	// IdleTTL past then.
	IdleTTL time.Duration
	// ItemTTL is how long an item nobody reads or writes is kept
	// (0 = DefaultItemTTL).
	ItemTTL time.Duration
	// MaxItemBytes: an item whose key and value weigh more is not stored
	// (0 = memstore.DefaultMaxItemBytes/8, as the local store).
	MaxItemBytes int
	// Logger receives the outage and recovery lines (nil = slog.Default()).
	Logger *slog.Logger
}

// Store is a state.Store and state.ItemStore on Redis, falling back to
// local memory while Redis is unreachable. It is safe for concurrent use;
// use New to create one and Close to release it.
type Store struct {
	opt  Options
	addr string
	copt rueidis.ClientOption
	log  *slog.Logger
	cas  *rueidis.Lua
	// seen maps a breaker key to the record this replica last read or
	// wrote there: UpdateBreaker's guess, which saves the read when right
	// and costs nothing when wrong (the script answers the current record).
	seen *otter.Cache[string, string]
	// keyLocks serialise this replica's updates of one key (by stripe), so
	// its compare-and-set races only other replicas' writes: eight
	// goroutines on one hot key could lose maxTries races in a row under
	// load, and a lost update fell back to local state as if Redis were down.
	keyLocks [64]sync.Mutex
	// guessed counts, by the same stripes, the guesses updates left in
	// seen: a read answered before one of them must not replace it.
	guessed [64]atomic.Uint64
	// later holds the updates UpdateBreakerLater writes after returning.
	later laterQueue
	// trips counts the round trips to the server on callers' paths,
	// laterTrips those of the writes after (see counted).
	trips, laterTrips atomic.Int64

	mu     sync.Mutex
	client rueidis.Client // nil until the first connection
	local  *local

	down      atomic.Bool
	fallbacks atomic.Int64
	outages   atomic.Int64
	lastErr   atomic.Pointer[string]
	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
}

// local is the state served while Redis is away; a new one begins each
// outage, so records left from an earlier outage never outlive Redis's.
type local struct {
	breakers *memstore.Store
	items    *memstore.Items
	results  *memstore.Results
	leases   *memstore.Leases
}

// New returns a Store for o.URL. It connects at once (bounded by a second,
// or by the URL's dial_timeout): a server that does not answer is no error,
// the store starts on local state and connects in the background. Only a
// malformed URL or option is an error.
func New(ctx context.Context, o *Options) (*Store, error) {
	v := defaults.Copy(o)
	copt, err := ParseURL(v.URL)
	if err != nil {
		return nil, err
	}
	defaults.Positive(&v.Timeout, DefaultTimeout)
	v.Prefix = cmp.Or(v.Prefix, DefaultPrefix)
	defaults.Positive(&v.IdleTTL, DefaultIdleTTL)
	defaults.Positive(&v.ItemTTL, DefaultItemTTL)
	defaults.Positive(&v.MaxItemBytes, memstore.DefaultMaxItemBytes/8)
	if v.Logger == nil {
		v.Logger = slog.Default()
	}
	s := &Store{opt: v, addr: strings.Join(copt.InitAddress, ","), copt: copt, log: v.Logger,
		cas: rueidis.NewLuaScriptRetryable(casScript), local: newLocal(), done: make(chan struct{}),
		seen: otter.Must(&otter.Options[string, string]{MaximumSize: seenEntries,
			ExpiryCalculator: otter.ExpiryWriting[string, string](seenTTL)})}
	if err := s.connect(ctx); err != nil {
		s.fail(err)
	}
	return s, nil
}

// ParseURL checks a state.redis_url and returns the client options it
// names, with this package's defaults (a one-second dial timeout, a
// client name) where the URL says nothing.
func ParseURL(u string) (rueidis.ClientOption, error) {
	if u == "" {
		return rueidis.ClientOption{}, errors.New("no URL (want redis://host:port)")
	}
	if _, err := url.Parse(u); err != nil { // its message would quote the password
		return rueidis.ClientOption{}, errors.New("not a URL (want redis://host:port)")
	}
	copt, err := rueidis.ParseURL(u)
	if err != nil {
		return copt, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "redis: "))
	}
	if copt.Dialer.Timeout == 0 {
		copt.Dialer.Timeout = time.Second
	}
	if copt.ClientName == "" {
		copt.ClientName = "llmguard"
	}
	// Reads are not served from the client-side cache: an invalidation
	// arrives after the write's answer, so a replica could miss its own
	// last write (and the breaker records change with nearly every call).
	copt.DisableCache = true
	return copt, nil
}

func newLocal() *local {
	return &local{breakers: memstore.New(), items: memstore.NewItems(nil), results: memstore.NewResults(), leases: memstore.NewLeases()}
}

// Addr returns the server addresses the URL names (the password left out).
func (s *Store) Addr() string { return s.addr }

// Close writes the updates UpdateBreakerLater holds, stops reconnecting
// and closes the connections. The Store must not be used after.
func (s *Store) Close() {
	s.closeOnce.Do(func() {
		s.later.mu.Lock()
		s.later.closed = true
		s.later.mu.Unlock()
		close(s.done)
		s.wg.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.client != nil {
			s.client.Close()
		}
	})
}

// recordKey is where the record of a breaker key lives.
func (s *Store) recordKey(key string) string {
	return s.opt.Prefix + schema + "breaker:{" + key + "}"
}

// Breaker returns the record at key, or the zero Breaker.
func (s *Store) Breaker(ctx context.Context, key string) (state.Breaker, error) {
	bs, err := s.Breakers(ctx, []string{key})
	if err != nil {
		return state.Breaker{}, err
	}
	return bs[0], nil
}

// read returns the stored record at key ("" when none).
func (s *Store) read(ctx context.Context, c rueidis.Client, key string) (string, error) {
	v, err := c.Do(ctx, c.B().Get().Key(s.recordKey(key)).Build()).ToString()
	if rueidis.IsRedisNil(err) {
		v, err = "", nil
	}
	if err == nil {
		s.seen.Set(key, v)
	}
	return v, err
}

// UpdateBreaker reads the record at key, applies fn and stores the result
// if the record did not change meanwhile; otherwise it applies fn again to
// the record as it now is.
func (s *Store) UpdateBreaker(ctx context.Context, key string, fn func(b *state.Breaker) bool) (state.Breaker, error) {
	if err := ctx.Err(); err != nil {
		return state.Breaker{}, err
	}
	c, l := s.use()
	if c == nil {
		return l.breakers.UpdateBreaker(ctx, key, fn)
	}
	lock := &s.keyLocks[stripe(key)]
	lock.Lock()
	b, err := s.update(ctx, c, key, fn)
	lock.Unlock()
	if err == nil {
		return b, nil
	}
	if ctx.Err() != nil {
		return state.Breaker{}, ctx.Err()
	}
	s.fail(err)
	return s.locally().breakers.UpdateBreaker(ctx, key, fn)
}

// update is UpdateBreaker on Redis, each round trip bounded by Timeout.
func (s *Store) update(ctx context.Context, c rueidis.Client, key string, fn func(b *state.Breaker) bool) (state.Breaker, error) {
	// raw is what the server is believed to hold; fresh says it was just
	// read, so that fn's "no change" on it is an answer.
	raw, guessed := s.seen.GetIfPresent(key)
	fresh := false
	rk := []string{s.recordKey(key)}
	for range maxTries {
		if !guessed && !fresh {
			cctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
			var err error
			raw, err = s.read(cctx, c, key)
			cancel()
			if err != nil {
				return state.Breaker{}, err
			}
			fresh = true
		}
		guessed = false
		var b state.Breaker
		if err := decode(raw, &b); err != nil {
			return state.Breaker{}, err
		}
		before := b
		if !fn(&b) {
			if fresh {
				return before, nil
			}
			continue // a guess: read what the server holds and ask fn again
		}
		next, err := json.Marshal(&b)
		if err != nil {
			return state.Breaker{}, err
		}
		args := []string{raw, string(next), strconv.FormatInt(keepUntil(&b).UnixMilli(), 10),
			strconv.FormatInt(s.opt.IdleTTL.Milliseconds(), 10)}
		cctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
		res, err := s.cas.Exec(cctx, c, rk, args).ToArray()
		cancel()
		if err != nil {
			return state.Breaker{}, err
		}
		if len(res) == 0 {
			return state.Breaker{}, errors.New("compare-and-set: empty answer")
		}
		if ok, _ := res[0].AsInt64(); ok == 1 {
			s.guess(key, args[1])
			return b, nil
		}
		if len(res) < 2 {
			return state.Breaker{}, errors.New("compare-and-set: no current record")
		}
		if raw, err = res[1].ToString(); err != nil {
			return state.Breaker{}, err
		}
		s.guess(key, raw)
		fresh = true
	}
	return state.Breaker{}, fmt.Errorf("compare-and-set on %q lost %d races", key, maxTries)
}

// stripe is key's stripe of keyLocks and guessed.
func stripe(key string) uint64 { return maphash.String(stripeSeed, key) % 64 }

// guess keeps raw as what an update of key left on the server.
func (s *Store) guess(key, raw string) {
	s.seen.Set(key, raw)
	s.guessed[stripe(key)].Add(1)
}

// keepUntil is the latest moment the record must outlive: the end of its
// open period, cooldown, pacing or server-requested wait (zero when none).
func keepUntil(b *state.Breaker) time.Time {
	t := b.OpenUntil
	for _, u := range []time.Time{b.CooldownUntil, b.PaceAt, b.WaitUntil} {
		if u.After(t) {
			t = u
		}
	}
	if t.IsZero() {
		return time.Unix(0, 0)
	}
	return t
}

// casScript stores ARGV[2] at KEYS[1] if it still holds ARGV[1] ("" = no
// record) and answers {1}; otherwise it answers {0, what it holds}. The
// record expires ARGV[4] ms after the later of now (the server's clock)
// and ARGV[3] (unix ms). The client sends it again on a fresh connection
// when one breaks (after a restart of Redis, its other connections still
// lead to the killed server): a write whose answer alone was lost is then
// applied twice (a call counted twice in a window), where a write never
// sent would have begun an outage.
const casScript = `local cur = redis.call('GET', KEYS[1])
if cur == false then cur = '' end
if cur ~= ARGV[1] then return {0, cur} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[4]) + math.max(0, tonumber(ARGV[3]) - now)
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
return {1}`

func decode(raw string, b *state.Breaker) error {
	if raw == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(raw), b); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

var (
	_ state.Store     = (*Store)(nil)
	_ state.ItemStore = (*Store)(nil)
)
