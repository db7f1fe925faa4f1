package redisstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// Reconnection backoff while Redis is away: full jitter between zero and a
// cap that doubles from retryBase to retryMax.
const (
	retryBase = 50 * time.Millisecond
	retryMax  = 5 * time.Second
)

// Status is what a Store says of its connection, for start-up lines,
// doctor and metrics. The zero value is a store that shares.
type Status struct {
	// Addr is the server addresses the URL names.
	Addr string
	// Shared is false while calls are served from local state.
	Shared bool
	// Fallbacks counts the calls served from local state.
	Fallbacks int64
	// Outages counts the times Redis went away (a failed first connection
	// included).
	Outages int64
	// LastError is the last failure that began an outage ("" = none).
	LastError string
}

// Status returns the store's current status.
func (s *Store) Status() Status {
	st := Status{Addr: s.addr, Shared: !s.down.Load(), Fallbacks: s.fallbacks.Load(), Outages: s.outages.Load()}
	if e := s.lastErr.Load(); e != nil {
		st.LastError = *e
	}
	return st
}

// use returns the client while Redis is deemed reachable, else nil and the
// local state to serve the call from (counting the fallback).
func (s *Store) use() (rueidis.Client, *local) {
	if !s.down.Load() {
		s.mu.Lock()
		c := s.client
		s.mu.Unlock()
		if c != nil {
			return c, nil
		}
	}
	return nil, s.locally()
}

// locally returns the local state and counts a call served from it.
func (s *Store) locally() *local {
	s.fallbacks.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.local
}

// fail begins an outage, unless one is under way: later calls are served
// locally from a fresh local state, the outage is logged once and a
// goroutine reconnects.
func (s *Store) fail(err error) {
	if !s.down.CompareAndSwap(false, true) {
		return
	}
	msg := err.Error()
	s.lastErr.Store(&msg)
	s.outages.Add(1)
	s.mu.Lock()
	s.local = newLocal()
	s.mu.Unlock()
	s.log.Warn("state: redis unreachable, serving from local state until it answers", "addr", s.addr, "err", msg)
	select {
	case <-s.done:
		return
	default:
	}
	s.wg.Add(1)
	go s.reconnect()
}

// reconnect pings (or first connects) with backoff until Redis answers,
// then resumes sharing.
func (s *Store) reconnect() {
	defer s.wg.Done()
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	ceil := retryBase
	for {
		t := time.NewTimer(time.Duration(r.Int64N(int64(ceil)) + 1))
		select {
		case <-s.done:
			t.Stop()
			return
		case <-t.C:
		}
		ceil = min(2*ceil, retryMax)
		if err := s.connect(context.Background()); err != nil {
			continue
		}
		s.down.Store(false)
		s.log.Info("state: redis answers again, sharing state", "addr", s.addr)
		return
	}
}

// connect makes the client if there is none yet, and pings the server.
func (s *Store) connect(ctx context.Context) error {
	s.mu.Lock()
	c := s.client
	s.mu.Unlock()
	if c == nil {
		var err error
		if c, err = s.dial(); err != nil {
			return err
		}
		s.mu.Lock()
		select {
		case <-s.done:
			s.mu.Unlock()
			c.Close()
			return errors.New("store closed")
		default:
		}
		s.client = c
		s.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(ctx, max(s.opt.Timeout, s.copt.Dialer.Timeout))
	defer cancel()
	return c.Do(ctx, c.B().Ping().Build()).Error()
}

// dial makes the client, without client-side caching when the server
// cannot do it (before Redis 6, or RESP2 only).
func (s *Store) dial() (rueidis.Client, error) {
	c, err := rueidis.NewClient(s.copt)
	if errors.Is(err, rueidis.ErrNoCache) {
		o := s.copt
		o.DisableCache = true
		c, err = rueidis.NewClient(o)
	}
	if err != nil {
		return nil, err
	}
	return counted{Client: c, s: s}, nil
}

// Ping connects once to the server o names (no fallback, no retry, within
// ctx) and returns how long a PING took and what the server says it is
// ("redis 7.0.15", "valkey 8.1.1"). It is what `llmguard doctor` checks.
func Ping(ctx context.Context, o *Options) (rtt time.Duration, server string, err error) {
	var url string
	if o != nil {
		url = o.URL
	}
	copt, err := ParseURL(url)
	if err != nil {
		return 0, "", err
	}
	copt.DisableRetry = true
	c, err := rueidis.NewClient(copt)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	start := time.Now()
	if err := c.Do(ctx, c.B().Ping().Build()).Error(); err != nil {
		return 0, "", err
	}
	rtt = time.Since(start)
	info, err := c.Do(ctx, c.B().Info().Section("server").Build()).ToString()
	if err != nil {
		return rtt, "", nil
	}
	name, version := "redis", ""
	for line := range strings.Lines(info) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		switch k {
		case "server_name":
			name = v
		case "redis_version":
			if version == "" {
				version = v
			}
		case "valkey_version":
			version = v
		}
	}
	return rtt, strings.TrimSpace(name + " " + version), nil
}
