package config

import (
	"time"

	"github.com/llmguard/llmguard/state/redisstore"
)

// State backends.
const (
	StateMemory = "memory"
	StateRedis  = "redis"
)

// DefaultStateTimeout bounds each call to a shared state store.
const DefaultStateTimeout = redisstore.DefaultTimeout

// State says where breaker records, cooldowns and the gateway's Responses
// items live: in this process (the default), or in a Redis or Valkey that
// several replicas share. The zero value is the memory backend.
type State struct {
	// Backend is "memory" (the default: this process only) or "redis".
	Backend string `yaml:"backend"`
	// RedisURL names the server of the redis backend: redis:// or rediss://
	// (TLS), ?addr=host:port for more Cluster seeds, ?master_set=NAME for
	// Sentinel (the URL's addresses then are the sentinels'). Usually
	// "${REDIS_URL}"; its password is never printed.
	RedisURL string `yaml:"redis_url"`
	// Timeout bounds each call to Redis (0 = 50ms): a call that takes
	// longer, or a Redis that is away, is served from local state.
	Timeout time.Duration `yaml:"timeout"`
}

// provision fills in the defaults.
func (s *State) provision() {
	if s.Backend == "" {
		s.Backend = StateMemory
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultStateTimeout
	}
}

// RedisOptions returns the options of the redis backend's store (nil for
// the memory backend).
func (s *State) RedisOptions() *redisstore.Options {
	if s.Backend != StateRedis {
		return nil
	}
	return &redisstore.Options{URL: s.RedisURL, Timeout: s.Timeout}
}

func (v *validator) state() {
	s := v.c.State
	switch s.Backend {
	case "", StateMemory:
		if s.RedisURL != "" {
			v.add("state.redis_url", "set, but state.backend is %q (set backend: redis to share state)", StateMemory)
		}
	case StateRedis:
		if s.RedisURL == "" {
			v.add("state.redis_url", "missing: backend redis needs a redis:// or rediss:// URL (for example ${REDIS_URL})")
		} else if _, err := redisstore.ParseURL(s.RedisURL); err != nil {
			v.add("state.redis_url", "%v", err)
		}
	default:
		v.add("state.backend", "must be memory or redis, not %q", s.Backend)
	}
	v.nonNeg("state.timeout", s.Timeout)
}
