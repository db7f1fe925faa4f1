// Package lograte keeps a flood of identical log lines from drowning the
// log: a Handler passes the first warning (or error) of a kind through, then
// counts the identical ones for an interval and logs the last of them once
// with how many there were (repeated=N). An outage that fails a thousand
// requests a second logs a line per interval, not a thousand.
//
// Records below Warn (access lines, debug events) pass through untouched.
//
//	h := lograte.New(slog.NewTextHandler(os.Stderr, nil), nil)
//	defer h.Flush()
//	log := slog.New(h)
package lograte

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults for Options fields left zero.
const (
	DefaultInterval = 10 * time.Second
	DefaultMaxKinds = 1024
)

// Options configures a Handler; nil or zero fields mean the defaults.
type Options struct {
	// Interval is how long identical records are counted before the count
	// is logged (0 = DefaultInterval).
	Interval time.Duration
	// MaxKinds bounds the kinds of record tracked at once (0 =
	// DefaultMaxKinds). Beyond it records are told apart by level and
	// message only.
	MaxKinds int
}

// Handler is a slog.Handler that rate-limits identical warnings. Create it
// with New; it is safe for concurrent use. Handlers made by WithAttrs and
// WithGroup share their parent's counts.
type Handler struct {
	next slog.Handler
	st   *store
	// scope tells apart records logged through different WithAttrs or
	// WithGroup children.
	scope string
}

// store is the state shared by a Handler and its children.
type store struct {
	interval time.Duration
	max      int
	mu       sync.Mutex
	kinds    map[string]*kind
	pruned   time.Time // when pruneLocked last ran
}

// kind is one kind of record: its window and what it suppressed.
type kind struct {
	end        time.Time // when the current window ends
	suppressed int
	last       slog.Record
	next       slog.Handler
	timer      *time.Timer
}

// New returns a Handler writing to next, configured by o (nil = defaults).
func New(next slog.Handler, o *Options) *Handler {
	st := &store{interval: DefaultInterval, max: DefaultMaxKinds, kinds: map[string]*kind{}}
	if o != nil && o.Interval > 0 {
		st.interval = o.Interval
	}
	if o != nil && o.MaxKinds > 0 {
		st.max = o.MaxKinds
	}
	return &Handler{next: next, st: st}
}

// Enabled reports whether next handles level.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// WithAttrs returns a Handler whose records carry as, sharing h's counts.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.scope)
	for _, a := range as {
		writeAttr(&b, a)
	}
	return &Handler{next: h.next.WithAttrs(as), st: h.st, scope: b.String()}
}

// WithGroup returns a Handler that groups records' attributes under name.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), st: h.st, scope: h.scope + "\x00g:" + name}
}

// Handle passes r on, unless it is a warning identical to one passed on
// less than an interval ago: then it is counted, and the last one is logged
// with repeated=N when the interval ends.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return h.next.Handle(ctx, r)
	}
	key := h.key(r, true)
	now := r.Time
	if now.IsZero() {
		now = time.Now()
	}
	s := h.st
	s.mu.Lock()
	k := s.kinds[key]
	if k == nil && len(s.kinds) >= s.max {
		s.pruneLocked(now)
		if len(s.kinds) >= s.max {
			key = h.key(r, false)
			k = s.kinds[key]
		}
	}
	if k == nil || !now.Before(k.end) {
		if k == nil {
			k = &kind{}
			s.kinds[key] = k
		}
		pending, next, n := k.take()
		k.end = now.Add(s.interval)
		s.mu.Unlock()
		if n > 0 {
			emit(next, pending, n, s.interval)
		}
		return h.next.Handle(ctx, r)
	}
	k.suppressed++
	k.last, k.next = r.Clone(), h.next
	if k.timer == nil {
		k.timer = time.AfterFunc(k.end.Sub(now), func() { s.flush(key) })
	}
	s.mu.Unlock()
	return nil
}

// Flush logs every count still pending (call it before the process exits).
func (h *Handler) Flush() {
	h.st.mu.Lock()
	keys := make([]string, 0, len(h.st.kinds))
	for key := range h.st.kinds {
		keys = append(keys, key)
	}
	h.st.mu.Unlock()
	for _, key := range keys {
		h.st.flush(key)
	}
}

// flush logs the last suppressed record of key with its count, and starts
// a new window so identical records keep being counted.
func (s *store) flush(key string) {
	s.mu.Lock()
	k := s.kinds[key]
	if k == nil {
		s.mu.Unlock()
		return
	}
	// The count is written under the lock, so that when Flush returns every
	// count is out, also one a timer was writing at that moment.
	defer s.mu.Unlock()
	if r, next, n := k.take(); n > 0 {
		k.end = time.Now().Add(s.interval)
		emit(next, r, n, s.interval)
	}
}

// take returns what k suppressed and resets it. The caller holds the lock.
func (k *kind) take() (slog.Record, slog.Handler, int) {
	if k.timer != nil {
		k.timer.Stop()
		k.timer = nil
	}
	r, next, n := k.last, k.next, k.suppressed
	k.suppressed, k.last, k.next = 0, slog.Record{}, nil
	return r, next, n
}

// emit logs r, the last of n suppressed records, with their count.
func emit(next slog.Handler, r slog.Record, n int, within time.Duration) {
	r.AddAttrs(slog.Int("repeated", n), slog.Duration("within", within))
	_ = next.Handle(context.Background(), r)
}

// pruneLocked forgets kinds whose window ended with nothing pending, at
// most once a second (a flood of new kinds does not rescan per record).
func (s *store) pruneLocked(now time.Time) {
	if now.Sub(s.pruned) < time.Second {
		return
	}
	s.pruned = now
	for key, k := range s.kinds {
		if k.suppressed == 0 && !now.Before(k.end) {
			delete(s.kinds, key)
		}
	}
}

// key tells records apart: level, message and scope, and with attrs their
// attributes, where strings have their id-like tokens (request ids,
// timestamps) folded and numbers other than integers are left out, so two
// failures that differ only in their request id are the same kind.
func (h *Handler) key(r slog.Record, attrs bool) string {
	var b strings.Builder
	b.WriteString(r.Level.String())
	b.WriteByte(0)
	b.WriteString(r.Message)
	b.WriteString(h.scope)
	if attrs {
		r.Attrs(func(a slog.Attr) bool {
			writeAttr(&b, a)
			return true
		})
	}
	return b.String()
}

func writeAttr(b *strings.Builder, a slog.Attr) {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindFloat64, slog.KindDuration, slog.KindTime:
		return
	}
	b.WriteByte(0)
	b.WriteString(a.Key)
	b.WriteByte('=')
	switch v.Kind() {
	case slog.KindInt64:
		b.WriteString(strconv.FormatInt(v.Int64(), 10))
	case slog.KindGroup:
		for _, ga := range v.Group() {
			writeAttr(b, ga)
		}
	default:
		foldIDs(b, v.String())
	}
}

// foldIDs writes s with every run of word characters that is at least 8
// long and holds a digit (a request id, a timestamp, a counter) as '#'.
func foldIDs(b *strings.Builder, s string) {
	for i := 0; i < len(s); {
		j := i
		digit := false
		for j < len(s) && isWord(s[j]) {
			digit = digit || s[j] >= '0' && s[j] <= '9'
			j++
		}
		switch {
		case j == i:
			b.WriteByte(s[i])
			i++
			continue
		case j-i >= 8 && digit:
			b.WriteByte('#')
		default:
			b.WriteString(s[i:j])
		}
		i = j
	}
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}
