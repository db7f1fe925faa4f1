package provider

import (
	"net"
	"net/http"
	"time"

	"github.com/llmguard/llmguard/internal/defaults"
)

// TransportConfig tunes the HTTP transport every adapter shares. The zero
// value of each field means the default given in its comment; a nil
// *TransportConfig means all defaults.
type TransportConfig struct {
	// DialTimeout bounds establishing a TCP connection (default 10s).
	DialTimeout time.Duration
	// KeepAlive is the TCP keep-alive probe interval (default 30s).
	KeepAlive time.Duration
	// TLSHandshakeTimeout bounds the TLS handshake (default 10s).
	TLSHandshakeTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for response headers after the
	// request was written (default 10m). A non-streaming LLM call sends its
	// headers only when the whole answer is generated, so this is a safety
	// net; per-call deadlines belong in the context.
	ResponseHeaderTimeout time.Duration
	// IdleConnTimeout closes pooled idle connections after this long (default 90s).
	IdleConnTimeout time.Duration
	// MaxIdleConnsPerHost is the keep-alive pool size per host (default
	// DefaultIdleConnsPerHost). Over HTTP/1 every call in flight holds a
	// connection of its own: with more concurrent calls to a host than
	// this, the connections beyond it are closed as their calls end and
	// the next calls open new ones. The pool never holds more than were
	// in use at once, so a generous bound costs nothing while unused.
	MaxIdleConnsPerHost int
	// MaxIdleConns is the keep-alive pool size over all hosts (default
	// 4 × DefaultIdleConnsPerHost).
	MaxIdleConns int
}

// DefaultIdleConnsPerHost is the default keep-alive pool size per host.
const DefaultIdleConnsPerHost = 256

func (c *TransportConfig) withDefaults() TransportConfig {
	d := defaults.Copy(c)
	def := func(v *time.Duration, x time.Duration) {
		if *v <= 0 {
			*v = x
		}
	}
	def(&d.DialTimeout, 10*time.Second)
	def(&d.KeepAlive, 30*time.Second)
	def(&d.TLSHandshakeTimeout, 10*time.Second)
	def(&d.ResponseHeaderTimeout, 10*time.Minute)
	def(&d.IdleConnTimeout, 90*time.Second)
	if d.MaxIdleConnsPerHost <= 0 {
		d.MaxIdleConnsPerHost = DefaultIdleConnsPerHost
	}
	if d.MaxIdleConns <= 0 {
		d.MaxIdleConns = 4 * DefaultIdleConnsPerHost
	}
	d.MaxIdleConns = max(d.MaxIdleConns, d.MaxIdleConnsPerHost)
	return d
}

// NewTransport returns the tuned transport adapters share: a keep-alive pool
// per host, HTTP/2 attempted over TLS, proxies from the environment, and
// dial, TLS-handshake and response-header timeouts; over plain HTTP a
// relayed body's slices go to the connection in one writev (dialBuffers).
// cfg may be nil.
// The transport is safe for concurrent use; create one per process and
// share it (through NewHTTPClient) so every adapter reuses its connections.
func NewTransport(cfg *TransportConfig) *http.Transport {
	c := cfg.withDefaults()
	d := &net.Dialer{Timeout: c.DialTimeout, KeepAlive: c.KeepAlive}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialBuffers(d),
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   c.TLSHandshakeTimeout,
		ResponseHeaderTimeout: c.ResponseHeaderTimeout,
		IdleConnTimeout:       c.IdleConnTimeout,
		MaxIdleConns:          c.MaxIdleConns,
		MaxIdleConnsPerHost:   c.MaxIdleConnsPerHost,
		ExpectContinueTimeout: time.Second,
	}
}

// NewHTTPClient returns an *http.Client on NewTransport(cfg). It has no
// overall Timeout: the caller's context bounds each call, so a long stream is
// not cut off. The client is safe for concurrent use.
func NewHTTPClient(cfg *TransportConfig) *http.Client {
	return &http.Client{Transport: NewTransport(cfg)}
}
