package config

import "github.com/llmguard/llmguard/provider"

// DefaultIdleConns is a target's idle upstream connections when neither
// max_idle_conns nor max_concurrency bounds it.
const DefaultIdleConns = provider.DefaultIdleConnsPerHost

// IdleConns is how many idle upstream connections target t of route r
// keeps: its max_idle_conns (the target's, else the route's), else its
// max_concurrency (the calls it can have in flight, each on a connection
// of its own over HTTP/1), else DefaultIdleConns.
func (r *Route) IdleConns(t Target) int {
	switch p := r.PolicyFor(t); {
	case t.MaxIdleConns > 0:
		return t.MaxIdleConns
	case r.MaxIdleConns > 0:
		return r.MaxIdleConns
	case p.MaxConcurrency > 0:
		return p.MaxConcurrency
	}
	return DefaultIdleConns
}

// Transport returns the settings of the HTTP transport the adapters share
// (provider.NewTransport): the keep-alive pool of each provider holds as
// many idle connections as its targets keep together (Route.IdleConns; a
// target listed by several routes counts once, with its largest), so that
// calls up to the targets' concurrency reuse connections instead of
// opening new ones. One transport serves every host, so its per-host
// bound is the largest provider's, and its total the sum. A configuration
// without routes gets the transport's defaults. HTTP/2, where an upstream
// offers it over TLS, multiplexes calls on one connection whatever these
// bounds.
func (c *Config) Transport() *provider.TransportConfig {
	byTarget := map[string]int{}
	provOf := map[string]string{}
	for _, r := range c.Routes {
		if r == nil {
			continue
		}
		for _, t := range r.Targets {
			byTarget[t.Target] = max(byTarget[t.Target], r.IdleConns(t))
			provOf[t.Target] = t.Provider()
		}
	}
	byProvider := map[string]int{}
	tc := &provider.TransportConfig{}
	for target, n := range byTarget {
		p := provOf[target]
		byProvider[p] += n
		tc.MaxIdleConnsPerHost = max(tc.MaxIdleConnsPerHost, byProvider[p])
		tc.MaxIdleConns += n
	}
	return tc
}
