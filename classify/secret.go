package classify

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Secret values are known to the process, not to one call: the provider
// keys, base-URL credentials and webhook URLs of the configuration (which
// config.Provision registers), the gateway keys and the MCP token. Redact
// masks every one of them wherever it appears, so a key with no known
// prefix (Mistral, Azure, Together, OpenAI-compatible servers) echoed by an
// upstream never reaches a verdict, an error body, /status, an alert or a
// log line.

// minSecret is the shortest value AddSecrets keeps: shorter ones would mask
// ordinary words.
const minSecret = 8

// maxSecrets bounds the registry; beyond it the oldest values are dropped.
const maxSecrets = 256

// secretSet is one immutable state of the registry.
type secretSet struct {
	order  []string // registration order, oldest first
	sorted []string // longest first: a secret containing another is masked whole
}

var (
	secretsMu sync.Mutex                // serialises AddSecrets
	secrets   atomic.Pointer[secretSet] // read by Redact without a lock
)

// AddSecrets registers secret values for Redact to mask ("***") wherever
// they appear. Values shorter than 8 bytes (after trimming spaces) are
// ignored, and so is "none". The registry is process-wide and keeps the
// newest 256 values. It is safe for concurrent use.
func AddSecrets(values ...string) {
	secretsMu.Lock()
	defer secretsMu.Unlock()
	var order []string
	if cur := secrets.Load(); cur != nil {
		order = slices.Clone(cur.order)
	}
	n := len(order)
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) >= minSecret && v != "none" && !slices.Contains(order, v) {
			order = append(order, v)
		}
	}
	if len(order) == n {
		return
	}
	if len(order) > maxSecrets {
		order = order[len(order)-maxSecrets:]
	}
	sorted := slices.Clone(order)
	slices.SortStableFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	secrets.Store(&secretSet{order: order, sorted: sorted})
}

// redactValues masks every registered secret in s.
func redactValues(s string) string {
	set := secrets.Load()
	if set == nil {
		return s
	}
	for _, v := range set.sorted {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "***")
		}
	}
	return s
}

// redactUserinfo masks the user info of every URL in s:
// "http://TOKEN@host" and "https://user:pass@host" become "http://***@host".
func redactUserinfo(s string) string {
	if strings.IndexByte(s, '@') < 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for off := 0; ; {
		i := strings.Index(s[off:], "://")
		if i < 0 {
			break
		}
		start := off + i + 3
		end := start
		for end < len(s) && isUserinfoChar(s[end]) {
			end++
		}
		if end < len(s) && s[end] == '@' && end > start && s[start:end] != "***" {
			b.WriteString(s[last:start])
			b.WriteString("***")
			last = end
		}
		off = max(end, start)
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// isUserinfoChar reports whether c may appear in a URL's user info (RFC
// 3986 unreserved, sub-delims, ':' and '%').
func isUserinfoChar(c byte) bool {
	switch {
	case isKeyChar(c):
		return true
	case strings.IndexByte(".~!$&'()*+,;=:%", c) >= 0:
		return true
	}
	return false
}

// RedactHandler wraps h so that every record it handles has Redact applied
// to its message and to every string, error and Stringer attribute value
// (groups included). Use it for every logger that may see provider errors.
func RedactHandler(h slog.Handler) slog.Handler { return redactHandler{h} }

type redactHandler struct{ h slog.Handler }

func (r redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = redactAttr(a)
	}
	return redactHandler{r.h.WithAttrs(red)}
}

func (r redactHandler) WithGroup(name string) slog.Handler { return redactHandler{r.h.WithGroup(name)} }

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); s != "" {
			a.Value = slog.StringValue(Redact(s))
		}
	case slog.KindGroup:
		g := v.Group()
		red := make([]slog.Attr, len(g))
		for i, ga := range g {
			red[i] = redactAttr(ga)
		}
		a.Value = slog.GroupValue(red...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			a.Value = slog.StringValue(Redact(x.Error()))
		case interface{ String() string }:
			a.Value = slog.StringValue(Redact(x.String()))
		}
	default:
		a.Value = v
	}
	return a
}
