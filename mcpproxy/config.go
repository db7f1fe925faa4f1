package mcpproxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/state"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the Config and Upstream fields left zero.
const (
	DefaultToolTimeout      = 50 * time.Second
	DefaultCacheTTL         = 10 * time.Minute
	DefaultRunFor           = 5 * time.Minute
	DefaultMaxAttempts      = 3
	DefaultStartTimeout     = 30 * time.Second
	DefaultPingTimeout      = 5 * time.Second
	DefaultProgressInterval = 10 * time.Second
	DefaultStableAfter      = 30 * time.Second
)

// Upstream is one MCP server whose tools llmguard re-exposes: a stdio
// server it starts (Command) or a Streamable HTTP server (URL). The zero
// value of every policy field means its documented default.
type Upstream struct {
	// Name names the server in every line and prefixes its tools
	// ("name__tool"); letters, digits, '-' and '_'.
	Name string
	// Command and Args start a stdio server; the server's stdin and stdout
	// carry JSON-RPC, its stderr goes to llmguard's debug log (and its last
	// lines into the reason it stopped).
	Command string
	Args    []string
	// Env is added to llmguard's own environment for Command.
	Env map[string]string
	// Dir is Command's working directory ("" = llmguard's).
	Dir string
	// URL is a Streamable HTTP server's endpoint ("https://host/mcp";
	// exactly one of Command and URL is set).
	URL string
	// Headers are sent with every HTTP request (e.g. Authorization).
	Headers map[string]string
	// Prefix is "auto" ("" = auto: a tool keeps its name unless another
	// server, or llmguard, has one of that name) or "always" (every tool is
	// "name__tool").
	Prefix string
	// ToolTimeout is each call's deadline (0 = Config.ToolTimeout); keep it
	// below the client's own tool timeout.
	ToolTimeout time.Duration
	// AttemptTimeout: an attempt of a retry-safe tool with no answer this
	// long is abandoned and retried (0 = an attempt may take the whole
	// deadline).
	AttemptTimeout time.Duration
	// MaxAttempts bounds the attempts of a retry-safe tool (0 =
	// DefaultMaxAttempts); other tools get one.
	MaxAttempts int
	// HedgeAfter: a retry-safe tool with no answer this long is also
	// started a second time, the first answer wins (0 = never).
	HedgeAfter time.Duration
	// RunFor is how long a call may keep running upstream after its
	// caller's deadline, so that the caller's repeat gets its result instead
	// of running it again (0 = DefaultRunFor).
	RunFor time.Duration
	// CacheTTL is how long a call's result answers an identical call
	// (0 = Config.CacheTTL, < 0 = only while it runs).
	CacheTTL time.Duration
	// Tools holds per-tool overrides by the server's tool name (nil = none).
	Tools map[string]ToolPolicy
	// Breaker is the server's breaker policy.
	Breaker Breaker
	// HTTPClient sends a URL server's requests (nil = one of its own on
	// http.DefaultTransport). Not a config key.
	HTTPClient *http.Client
	// Dial, when set, connects to the server instead of Command or URL: a
	// server in the same program, or a test's (each call a fresh
	// connection). Not a config key.
	Dial func(ctx context.Context) (mcp.Transport, error)
}

// ToolPolicy overrides one tool's settings.
type ToolPolicy struct {
	// Timeout is the tool's deadline (0 = the server's ToolTimeout).
	Timeout time.Duration
	// Idempotent, when set, overrides the tool's annotations: true makes it
	// retry-safe (retried on a transport failure or timeout, hedged), false
	// never retried. Nil: retry-safe when it declares readOnlyHint or
	// idempotentHint.
	Idempotent *bool
}

// Breaker is an upstream server's breaker policy: the engine's rules at the
// pace of tool calls. It opens on a failure rate over a sliding window:
// at least Failures transport failures or timeouts in Window and a failed
// share of at least FailureRatio beyond chance, never on a run of
// failures; open, it skips the server for its cooldown (InitialCooldown,
// doubled on each re-opening up to Cooldown), then admits one probe whose
// answer closes it. A server that can't start, crashes soon after it
// started or stops answering pings is skipped at once, for the same
// cooldowns, and restarted when they end.
type Breaker struct {
	// Failures is the fewest failures in Window that open it (0 = 3).
	Failures int
	// FailureRatio is the failed share of Window's calls that opens it (0 = 0.5).
	FailureRatio float64
	// Window is the sliding window of the failure rate (0 = 60s).
	Window time.Duration
	// InitialCooldown is the first cooldown (0 = 2s).
	InitialCooldown time.Duration
	// Cooldown caps the doubled cooldowns (0 = 60s).
	Cooldown time.Duration
}

// Config configures a Proxy. A nil *Config, and every zero field, means the
// documented default.
type Config struct {
	// Upstreams are the servers to proxy.
	Upstreams []Upstream
	// Reserved lists more tool names a proxied tool never takes: it is
	// prefixed instead (nil = none; the tools the server offers when Start
	// is called are reserved too).
	Reserved []string
	// ToolTimeout is a call's deadline when its server gives none
	// (0 = DefaultToolTimeout).
	ToolTimeout time.Duration
	// CacheTTL is how long a result answers an identical call when its
	// server gives none (0 = DefaultCacheTTL, < 0 = only while it runs).
	CacheTTL time.Duration
	// CacheEntries bounds the stored results (0 = 1000).
	CacheEntries int
	// StartTimeout bounds a server's start: the command's launch and the
	// MCP handshake (0 = DefaultStartTimeout). Start waits at most this
	// long for the servers' first tool lists.
	StartTimeout time.Duration
	// PingTimeout bounds the ping that tells a hanging server from a slow
	// tool after a call's deadline (0 = DefaultPingTimeout).
	PingTimeout time.Duration
	// StableAfter: a server that stops sooner than this after its start is
	// in a crash loop and restarted after a growing cooldown; later, at
	// once (0 = DefaultStableAfter).
	StableAfter time.Duration
	// ProgressInterval is how often a caller that sent a progressToken
	// hears that its call is still running (0 = DefaultProgressInterval).
	ProgressInterval time.Duration
	// Results, when set, is the store replicas share (Redis, state.backend
	// redis): a call's result answers an identical call on every replica
	// within the TTL, not only on this one, and an identical call that
	// reaches another replica while the first still runs waits for its
	// result (up to its RunFor), running the tool itself only if the first
	// call ends without one (nil = this process only).
	Results state.ResultStore
	// Logger receives the proxy's logs (nil = slog.Default()). In stdio
	// mode it must write to stderr.
	Logger *slog.Logger
	// Rand jitters retry backoffs (nil = a randomly seeded source). Used
	// under a lock.
	Rand *rand.Rand
}

func (c *Config) withDefaults() Config {
	d := defaults.Copy(c)
	defaults.Positive(&d.ToolTimeout, DefaultToolTimeout)
	d.CacheTTL = cmp.Or(d.CacheTTL, DefaultCacheTTL)
	defaults.Positive(&d.StartTimeout, DefaultStartTimeout)
	defaults.Positive(&d.PingTimeout, DefaultPingTimeout)
	defaults.Positive(&d.StableAfter, DefaultStableAfter)
	defaults.Positive(&d.ProgressInterval, DefaultProgressInterval)
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Rand == nil {
		d.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return d
}

// withDefaults resolves u's zero fields against the proxy's config.
func (u Upstream) withDefaults(c *Config) Upstream {
	if u.Prefix == "" {
		u.Prefix = "auto"
	}
	if u.ToolTimeout <= 0 {
		u.ToolTimeout = c.ToolTimeout
	}
	defaults.Positive(&u.MaxAttempts, DefaultMaxAttempts)
	defaults.Positive(&u.RunFor, DefaultRunFor)
	u.RunFor = max(u.RunFor, u.ToolTimeout)
	if u.CacheTTL == 0 {
		u.CacheTTL = c.CacheTTL
	}
	b := &u.Breaker
	if b.Failures <= 0 {
		b.Failures = 3
	}
	if b.FailureRatio <= 0 {
		b.FailureRatio = 0.5
	}
	if b.Window <= 0 {
		b.Window = time.Minute
	}
	if b.InitialCooldown <= 0 {
		b.InitialCooldown = 2 * time.Second
	}
	if b.Cooldown <= 0 {
		b.Cooldown = time.Minute
	}
	return u
}

// FieldError is one problem of an Upstream: the server, the field (its
// config key under mcp_upstreams.NAME, "" for the name itself) and what is
// wrong. Error is one line.
type FieldError struct {
	Upstream, Field, Msg string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("upstream %q: %s", e.Upstream, e.Msg)
	}
	return fmt.Sprintf("upstream %q: %s: %s", e.Upstream, e.Field, e.Msg)
}

// Validate checks u and returns every problem, each a *FieldError, joined
// with errors.Join.
func (u *Upstream) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Upstream: u.Name, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if !validName(u.Name) {
		bad("", "a name is 1 to 64 letters, digits, '-' and '_'")
	}
	switch {
	case u.Dial != nil:
	case u.Command == "" && u.URL == "":
		bad("command", "set command (a stdio server) or url (a Streamable HTTP server)")
	case u.Command != "" && u.URL != "":
		bad("url", "command is set too; a server is one or the other")
	case u.URL != "":
		if p, err := url.Parse(u.URL); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			bad("url", "%q is not an http(s) URL", u.URL)
		}
	}
	if len(u.Headers) > 0 && u.URL == "" {
		bad("headers", "are for a url server")
	}
	if u.Prefix != "" && u.Prefix != "auto" && u.Prefix != "always" {
		bad("prefix", "%q: use auto or always", u.Prefix)
	}
	u.validateNumbers(bad)
	return errors.Join(errs...)
}

// validateNumbers checks u's numbers and durations.
func (u *Upstream) validateNumbers(bad func(field, format string, args ...any)) {
	if u.Breaker.FailureRatio < 0 || u.Breaker.FailureRatio > 1 {
		bad("breaker.failure_ratio", "%v is not in [0,1]", u.Breaker.FailureRatio)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"tool_timeout", u.ToolTimeout}, {"attempt_timeout", u.AttemptTimeout}, {"hedge_after", u.HedgeAfter}, {"run_for", u.RunFor},
		{"breaker.window", u.Breaker.Window}, {"breaker.initial_cooldown", u.Breaker.InitialCooldown}, {"breaker.cooldown", u.Breaker.Cooldown}} {
		if d.v < 0 {
			bad(d.name, "%v is negative", d.v)
		}
	}
	if u.MaxAttempts < 0 {
		bad("max_attempts", "%d is negative", u.MaxAttempts)
	}
	if u.Breaker.Failures < 0 {
		bad("breaker.failures", "%d is negative", u.Breaker.Failures)
	}
	for name, tp := range u.Tools {
		if tp.Timeout < 0 {
			bad("tools."+name+".timeout", "%v is negative", tp.Timeout)
		}
	}
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// ParseUpstream parses the --upstream flag's value: "name=command args"
// (a stdio server; the command line is split on spaces, with single or
// double quotes grouping) or "name=https://host/mcp" (Streamable HTTP).
func ParseUpstream(s string) (Upstream, error) {
	name, rest, ok := strings.Cut(s, "=")
	name, rest = strings.TrimSpace(name), strings.TrimSpace(rest)
	if !ok || name == "" || rest == "" {
		return Upstream{}, fmt.Errorf("--upstream %q: want name=command args or name=https://host/mcp", s)
	}
	u := Upstream{Name: name}
	if strings.HasPrefix(rest, "http://") || strings.HasPrefix(rest, "https://") {
		u.URL = rest
	} else {
		words, err := SplitCommand(rest)
		if err != nil {
			return Upstream{}, fmt.Errorf("--upstream %s: %w", name, err)
		}
		u.Command, u.Args = words[0], words[1:]
	}
	if err := u.Validate(); err != nil {
		return Upstream{}, fmt.Errorf("--upstream %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return u, nil
}

// SplitCommand splits a command line into words: spaces separate them,
// single quotes keep everything literally, double quotes keep spaces and
// honour \" and \\, and a backslash outside quotes escapes the next
// character. No variables, globs or other shell syntax.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	esc := false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				esc = true
			default:
				cur.WriteRune(r)
			}
		case r == '\\':
			esc, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if esc {
		cur.WriteRune('\\')
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	return words, nil
}
