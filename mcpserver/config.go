package mcpserver

import (
	"context"
	"log/slog"
	"time"

	"github.com/llmguard/llmguard/batch"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/internal/version"
	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/telemetry"
)

// DefaultToolTimeout is a tool's deadline when Config.ToolTimeout is zero:
// below the common MCP clients' 60 s tool timeouts, so the agent gets a
// useful line instead of its own timeout.
const DefaultToolTimeout = 50 * time.Second

// DefaultCacheTTL is how long an answer is reused for an identical call
// when Config.CacheTTL is zero.
const DefaultCacheTTL = 10 * time.Minute

// DefaultMaxTokens is the answer budget of summarize and ask when the
// caller gives none.
const DefaultMaxTokens = 1024

// DefaultKeyEnv lists the variables the "no provider key" answer suggests
// when Config.KeyEnv is empty.
var DefaultKeyEnv = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"}

// Engine is what the server needs of a *resilience.Engine. Implementations
// must be safe for concurrent use.
type Engine interface {
	Chat(ctx context.Context, c *resilience.Call) (*resilience.Result, error)
	Status() []resilience.TargetStatus
}

// Config configures a server. A nil *Config, and every zero field, means the
// documented default. A Config must not be changed after New.
type Config struct {
	// Engine runs the LLM calls. Nil means no provider is configured: the
	// server still starts and lists its tools, and each LLM tool answers one
	// line saying which variables to set.
	Engine Engine
	// ConfigError, when Engine is nil, is why no engine could be built (a
	// config file error, a provider without its key); the LLM tools answer
	// it instead of the generic "no provider key" line.
	ConfigError string
	// Classify decides decode_error's verdict (nil = classify.Classify).
	Classify func(classify.Input) classify.Verdict
	// Logger receives the server's logs (nil = slog.Default()). In stdio mode
	// it must write to stderr: stdout carries only JSON-RPC.
	Logger *slog.Logger
	// Metrics, when set, counts each LLM tool call as a request of dialect
	// "mcp" (nil = none).
	Metrics *telemetry.Metrics
	// Tracer, when set, traces each LLM tool call: a span continuing the
	// traceparent of the request's _meta, a child per upstream attempt
	// (nil = no tracing).
	Tracer *telemetry.Tracer
	// ToolTimeout is each tool call's deadline (0 = DefaultToolTimeout).
	ToolTimeout time.Duration
	// Now is the clock (nil = time.Now).
	Now func() time.Time
	// Route is the route used when a call names none (""= "default").
	Route string
	// Resolve maps a tool call's route argument (a route, provider/model, or
	// a bare model id) to the engine's route, as config.Config.ResolveModel
	// does; its error is the tool's one-line answer. Nil passes names
	// through unchanged.
	Resolve func(name string) (string, error)
	// MaxTokens is the answer budget when a call gives none (0 = DefaultMaxTokens).
	MaxTokens int
	// KeyEnv names the provider key variables the "no key" answer suggests
	// (nil = DefaultKeyEnv).
	KeyEnv []string
	// Name and Version identify the server to clients ("" = "llmguard", and
	// llmguard's version from the build info, e.g. "v1.2.0" or
	// "devel-1a2b3c4d5e6f-dirty").
	Name, Version string
	// CacheTTL is how long a successful answer is reused for an identical
	// call (same tool, same canonical arguments): 0 = DefaultCacheTTL, < 0 = never.
	CacheTTL time.Duration
	// RouteCacheTTL, when set, gives a route's own cache TTL, used instead
	// of CacheTTL for that route's calls when it returns > 0.
	RouteCacheTTL func(route string) time.Duration
	// CacheEntries bounds the stored answers (0 = 1000).
	CacheEntries int
	// RecentFailures is how many failure lines llm_status keeps (0 = 20).
	RecentFailures int
	// AllowFiles lets batch_summarize read a file it is given by path and
	// write its results beside it (false: it takes a list of texts only).
	AllowFiles bool
	// BatchDir holds batch_summarize's results files for lists ("" = the
	// llmguard-batch folder in the system's temporary directory).
	BatchDir string
	// BatchCodec reads files in the OpenAI Batch API and Anthropic Message
	// Batches formats for batch_summarize (gateway.Codec{}; nil: such a file
	// is refused).
	BatchCodec batch.Codec
}

func (c *Config) withDefaults() Config {
	d := defaults.Copy(c)
	if d.Classify == nil {
		d.Classify = classify.Classify
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.ToolTimeout <= 0 {
		d.ToolTimeout = DefaultToolTimeout
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Route == "" {
		d.Route = "default"
	}
	if d.MaxTokens <= 0 {
		d.MaxTokens = DefaultMaxTokens
	}
	if len(d.KeyEnv) == 0 {
		d.KeyEnv = DefaultKeyEnv
	}
	if d.Name == "" {
		d.Name = "llmguard"
	}
	if d.Version == "" {
		d.Version = version.Get().Short()
	}
	if d.CacheTTL == 0 {
		d.CacheTTL = DefaultCacheTTL
	}
	if d.CacheEntries <= 0 {
		d.CacheEntries = 1000
	}
	if d.RecentFailures <= 0 {
		d.RecentFailures = 20
	}
	return d
}
