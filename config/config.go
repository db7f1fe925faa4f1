package config

import "time"

// Config is the whole configuration file. See docs/config.md for every key.
// Build one with Load, LoadDefault, FromEnv or Parse; the zero value is an
// empty configuration (call Provision to complete one built in Go). Once
// built it is read-only, and all its methods are safe for concurrent use.
type Config struct {
	// Providers maps a provider name to its settings. The key is the
	// provider's name; Type defaults to it for known providers.
	Providers map[string]*Provider `yaml:"providers"`
	// DefaultProvider is where a bare, unrouted model name goes ("" = nowhere).
	DefaultProvider string `yaml:"default_provider"`
	// Routes maps a route name to its targets and policies. "default" always exists after Load.
	Routes map[string]*Route `yaml:"routes"`
	// Pricing overrides the built-in $/MTok table, keyed "provider/model" or "model".
	Pricing map[string]Price `yaml:"pricing"`
	// Models overrides the built-in model catalogue (context window, prefill).
	Models map[string]ModelInfo `yaml:"models"`
	// Alerts configures the webhook.
	Alerts Alerts `yaml:"alerts"`
	// MCP configures `llmguard mcp`.
	MCP MCP `yaml:"mcp"`
	// MCPUpstreams maps a name to an MCP server whose tools `llmguard mcp`
	// re-exposes, guarded (see MCPUpstream).
	MCPUpstreams map[string]*MCPUpstream `yaml:"mcp_upstreams"`
	// State says where breaker state lives (memory, or a Redis replicas share).
	State State `yaml:"state"`

	// Source says where the configuration came from: the file path given to
	// Load, or "environment" for the zero-config built by FromEnv. Not a YAML key.
	Source string `yaml:"-"`

	// positions maps a field path ("routes.default.retry") to where it
	// appears in the source file, for error messages.
	positions map[string]position
	// implicit names providers added because a route or default_provider
	// used a known provider name that the providers key does not list.
	implicit map[string]bool
	// unsetVars maps a field path to the ${VARS} in it that were not set.
	unsetVars map[string][]string
	// envRefs maps a field path to every ${VAR} it referenced.
	envRefs map[string][]string
}

// Provider is one provider account. After Load every field is resolved
// (from the file, the provider's environment variables, or the defaults);
// the zero value means "all from the environment and defaults".
type Provider struct {
	// Type is the adapter: anthropic, openai, azure, gemini, deepseek, mistral,
	// groq, openrouter, xai, together, fireworks, openai-compatible. Defaults to the map key.
	Type string `yaml:"type"`
	// APIKey is the key (usually "${ENV_VAR}"). "none" sends no key.
	APIKey string `yaml:"api_key"`
	// BaseURL overrides the provider's documented base URL.
	BaseURL string `yaml:"base_url"`
	// APIVersion is Azure's api-version query parameter.
	APIVersion string `yaml:"api_version"`
	// Model is the provider's default model. For azure it is the deployment name.
	Model string `yaml:"model"`

	// keyVar is the environment variable the key came from ("" = the file).
	keyVar string
}

// Route is an ordered list of targets and the policies for calls over it.
// Decoded from YAML, absent keys take the DefaultRoute values; a Route built
// in Go gets them for its zero fields from Provision.
type Route struct {
	// Targets are "provider/model" strings or objects with per-target overrides.
	Targets []Target `yaml:"targets"`
	// Order is "priority" (as listed, the default) or "cost" (cheapest first).
	Order string `yaml:"order"`
	// Timeout is the one deadline for the whole call (default 60s).
	Timeout time.Duration `yaml:"timeout"`
	Retry   Retry         `yaml:"retry"`
	Stream  StreamPolicy  `yaml:"stream"`
	Breaker Breaker       `yaml:"breaker"`
	// MaxConcurrency caps in-flight calls per target (0 = unlimited).
	MaxConcurrency int `yaml:"max_concurrency"`
	// MaxIdleConns is how many idle upstream connections are kept for
	// each target, for its next calls (0 = its max_concurrency, or
	// DefaultIdleConns when that is unlimited). See Config.Transport.
	MaxIdleConns int `yaml:"max_idle_conns"`
	// QueueTimeout bounds the wait for a concurrency slot, and for a
	// pacing turn when the target's announced rate limit is spent (default 5s).
	QueueTimeout time.Duration `yaml:"queue_timeout"`
	// HedgeAfter starts the next target too after this long without a first token (0 = off).
	HedgeAfter time.Duration `yaml:"hedge_after"`
	// Hedge is the first-token hedge of streams.
	Hedge Hedge `yaml:"hedge"`
	// Cache enables idempotent result caching (TTL 0 = off).
	Cache Cache `yaml:"cache"`
	// FallbackOnContentFilter lets content_filtered failures fall back to the next target.
	FallbackOnContentFilter bool `yaml:"fallback_on_content_filter"`
	// MaxCostUSD is a spend ceiling per call in US dollars (0 = none): an
	// attempt whose cost, estimated from the catalogue's prices before it
	// is sent, exceeds what is left after the call's failed attempts is not
	// made. A request may lower it (x-llmguard-max-cost, the MCP tools'
	// max_cost_usd).
	MaxCostUSD float64 `yaml:"max_cost_usd"`
	// StaticFallback maps a prompt (trimmed, case-folded) to a canned answer
	// served, labelled, when every target failed; key "*" answers any prompt.
	StaticFallback map[string]string `yaml:"static_fallback"`
	// MaxClientWait is the longest wait a failed call tells its client to
	// sleep before retrying (the gateway's Retry-After): a failure that
	// lasts longer gets none, and x-should-retry: false (default 30s; 0
	// never sends one).
	MaxClientWait *time.Duration `yaml:"max_client_wait"`
	// RepeatHold is how long a failure the engine retried to exhaustion is
	// held for identical calls (a client's own retries): they get it at
	// once, with no upstream attempt, until this long after it or until a
	// target of the route answers (default 150s; 0 = off).
	RepeatHold *time.Duration `yaml:"repeat_hold"`

	// decoded: the route came from YAML, which pre-filled the defaults, so a
	// zero value is an explicit zero and Provision must not replace it.
	decoded bool
	// auto: Provision built this route (route "default" absent from the file).
	auto bool
}

// Target is one provider/model in a route, with optional per-target overrides.
// In YAML it is either a string "provider/model" or an object with key "target".
type Target struct {
	// Target is "provider/model" (after Load always with the model: a bare
	// provider name gets that provider's default model).
	Target string `yaml:"target"`
	// Breaker fields that are non-zero override the route's breaker.
	Breaker *Breaker `yaml:"breaker"`
	// MaxConcurrency, when non-zero, overrides the route's.
	MaxConcurrency int `yaml:"max_concurrency"`
	// MaxIdleConns, when non-zero, overrides the route's.
	MaxIdleConns int `yaml:"max_idle_conns"`
	// Retry fields that are non-zero override the route's retry policy.
	Retry *Retry `yaml:"retry"`

	// index is the target's position in the file (routes with order: cost
	// are sorted by Load), for error messages; index+1 (0 = not from a file).
	index int
}

// Retry is the retry policy on one target. In a route every field is
// effective; in a target override a zero field inherits the route's. It
// converts to resilience.Retry, the policy it configures.
type Retry struct {
	// MaxAttempts per target, first attempt included (default 4).
	MaxAttempts int `yaml:"max_attempts"`
	// MaxTotalAttempts across the whole route (default 10).
	MaxTotalAttempts int `yaml:"max_total_attempts"`
	// BaseDelay of the full-jitter exponential backoff (default 500ms).
	BaseDelay time.Duration `yaml:"base_delay"`
	// MaxDelay caps the backoff, not a larger server hint (default 30s).
	MaxDelay time.Duration `yaml:"max_delay"`
	// MaxWait: a server-requested wait longer than this moves on instead (default 60s).
	MaxWait time.Duration `yaml:"max_wait"`
	// Budget bounds the retry attempts in flight on a target to this
	// fraction of its active calls (default 0.5).
	Budget *float64 `yaml:"budget"`
	// MinRetryConcurrency retries are always allowed whatever the budget (default 3).
	MinRetryConcurrency *int `yaml:"min_retry_concurrency"`
}

// StreamPolicy holds stream-aware per-attempt timeouts. It converts to
// resilience.Timeouts.
type StreamPolicy struct {
	// FirstTokenTimeout: no first token within this moves on (default 15s).
	FirstTokenTimeout time.Duration `yaml:"first_token_timeout"`
	// IdleTimeout: a stream silent this long has stalled (default 20s).
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// HeaderTimeout: no response headers within this moves on (default 30s).
	HeaderTimeout time.Duration `yaml:"header_timeout"`
	// SilentAfter: no response headers for longer than this, then a
	// closed connection, is a timeout: the call falls back and does not
	// retry the target (default 5s).
	SilentAfter time.Duration `yaml:"silent_after"`
}

// Breaker is the circuit-breaker policy of a target. The breaker opens on a
// failure rate over a sliding window, never on a run of failures: with at
// least MinCalls calls in Window, at least Failures of them failed and a
// failed share of at least FailureRatio. In a target override a zero field
// inherits the route's. It converts to resilience.Breaker.
type Breaker struct {
	// Failures is the fewest failures in Window that open the breaker
	// (default 5; 0: no floor beyond FailureRatio and MinCalls).
	Failures *int `yaml:"failures"`
	// FailureRatio is the failed share of Window's calls that opens it
	// (default 0.5; 0: never opens on ill health).
	FailureRatio *float64 `yaml:"failure_ratio"`
	// MinCalls is the fewest calls in Window before it may open (default 20).
	MinCalls int `yaml:"min_calls"`
	// Window is the sliding window of the failure rate (default 10s).
	Window time.Duration `yaml:"window"`
	// InitialCooldown is how long it stays open the first time before
	// half-open (default 5s); each re-opening without a close doubles it.
	InitialCooldown time.Duration `yaml:"initial_cooldown"`
	// Cooldown is the longest it stays open (default 60s).
	Cooldown time.Duration `yaml:"cooldown"`
	// Probes is the fewest calls admitted at once while half-open (default
	// 3; more in proportion to the calls asking). The first to succeed
	// closes the breaker; Probes failures without a success re-open it.
	Probes int `yaml:"probes"`
}

// Hedge is a route's first-token hedge (resilience.Hedge).
type Hedge struct {
	// FirstTokenAfter: a stream with no content token after this long
	// starts the next target too, the first token wins (default 8s, on a
	// route with a fallback; 0 = off).
	FirstTokenAfter *time.Duration `yaml:"first_token_after"`
}

// Cache is the idempotency/result cache of a route; the zero TTL is off.
// It converts to resilience.Cache.
type Cache struct {
	// TTL keeps successful results this long (0 = no cache).
	TTL time.Duration `yaml:"ttl"`
	// MaxEntries bounds the stored results (default 10000).
	MaxEntries int `yaml:"max_entries"`
	// MaxBytes bounds the stored results (default 64 MiB).
	MaxBytes int64 `yaml:"max_bytes"`
}

// Price is dollars per million tokens (the pricing key's schema, decoded
// into catalog.Price); the zero value is free.
type Price struct {
	In  float64 `yaml:"in"`  // per million input tokens
	Out float64 `yaml:"out"` // per million output tokens
}

// ModelInfo is what the engine knows of a model (the models key's schema,
// decoded into catalog.Model). The zero value is an unknown model: unknown
// context window, no assistant prefill.
type ModelInfo struct {
	// ContextWindow in tokens (0 = unknown).
	ContextWindow int `yaml:"context_window"`
	// Prefill: the API continues a final assistant turn.
	Prefill bool `yaml:"prefill"`
	// Dimensions is an embedding model's vector size (0 = unknown, or not
	// an embedding model). Embeddings fall back only between targets that
	// give vectors of the same size.
	Dimensions int `yaml:"dimensions"`
	// MinDimensions is the smallest size the API shortens its vectors to on
	// request (OpenAI's dimensions, Gemini's outputDimensionality), any size
	// from it up to Dimensions (0 = it does not shorten them).
	MinDimensions int `yaml:"min_dimensions"`
}

// Alerts configures alert delivery; the zero value sends none.
type Alerts struct {
	// WebhookURL receives Slack-compatible JSON posts ("" = off).
	WebhookURL string `yaml:"webhook_url"`
}

// MCP configures the MCP server.
type MCP struct {
	// ToolTimeout is the deadline of each tool call; keep it below the
	// client's own tool timeout. Zero means 50s; the --tool-timeout flag wins.
	ToolTimeout time.Duration `yaml:"tool_timeout"`
}
