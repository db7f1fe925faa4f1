package mock

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RateLimit makes the mock enforce a request rate per provider and API key,
// as the real APIs do, and announce it on every generation answer (success
// or error): OpenAI and the compatible family x-ratelimit-limit-requests,
// x-ratelimit-remaining-requests and x-ratelimit-reset-requests (a Go
// duration: when the bucket is full again), Azure only the remaining count,
// Anthropic anthropic-ratelimit-requests-{limit,remaining,reset} (reset an
// RFC 3339 time); Gemini announces nothing. Each key's bucket holds Requests
// requests and refills continuously, Requests per Per; a request that finds
// it empty gets the provider's 429 rate-limit error with a retry-after of
// the seconds until the next request is allowed. A RateLimit is a value,
// read-only once given to New.
type RateLimit struct {
	// Requests is the bucket's size, the requests allowed at once (> 0).
	Requests int
	// Per is the time the bucket takes to refill from empty (0 = 1 minute,
	// a requests-per-minute limit).
	Per time.Duration
}

// maxBuckets bounds the buckets kept (one per provider and key a client
// sent); beyond it they all start again full.
const maxBuckets = 1024

// bucket is one key's request bucket.
type bucket struct {
	tokens float64
	at     time.Time
}

// rateState is what a request's bucket said, announced in its headers.
type rateState struct {
	limit, remaining int
	full             time.Duration // until the bucket is full again
}

// takeRate takes a request from x's bucket; it returns the wait until one
// is allowed when the bucket is empty. It records what to announce.
func (x *reply) takeRate() (wait time.Duration, ok bool) {
	s, rl := x.s, x.s.cfg.RateLimit
	per := rl.Per
	if per <= 0 {
		per = time.Minute
	}
	size := float64(rl.Requests)
	rate := size / per.Seconds() // requests per second
	now := s.now()
	k := x.rt.provider + "|" + x.key
	s.mu.Lock()
	if s.buckets == nil || len(s.buckets) >= maxBuckets {
		s.buckets = map[string]*bucket{}
	}
	b := s.buckets[k]
	if b == nil {
		b = &bucket{tokens: size, at: now}
		s.buckets[k] = b
	}
	b.tokens = min(size, b.tokens+now.Sub(b.at).Seconds()*rate)
	b.at = now
	ok = b.tokens >= 1
	if ok {
		b.tokens--
	} else {
		wait = time.Duration((1 - b.tokens) / rate * float64(time.Second))
	}
	x.rate = &rateState{limit: rl.Requests, remaining: int(math.Floor(b.tokens)),
		full: time.Duration((size - b.tokens) / rate * float64(time.Second))}
	s.mu.Unlock()
	return wait, ok
}

// rateHeaders sets the dialect's rate-limit headers for what takeRate
// recorded (none when the mock has no RateLimit).
func (x *reply) rateHeaders(h http.Header) {
	r := x.rate
	if r == nil {
		return
	}
	switch x.rt.dialect {
	case dialectAnthropic:
		h["Anthropic-Ratelimit-Requests-Limit"] = []string{strconv.Itoa(r.limit)}
		h["Anthropic-Ratelimit-Requests-Remaining"] = []string{strconv.Itoa(r.remaining)}
		// RFC 3339 has whole seconds: round up, so the bucket is full by then.
		at := x.s.now().Add(r.full + time.Second - 1).UTC().Truncate(time.Second)
		h["Anthropic-Ratelimit-Requests-Reset"] = []string{at.Format(time.RFC3339)}
	case dialectOpenAI:
		h["X-Ratelimit-Limit-Requests"] = []string{strconv.Itoa(r.limit)}
		h["X-Ratelimit-Remaining-Requests"] = []string{strconv.Itoa(r.remaining)}
		h["X-Ratelimit-Reset-Requests"] = []string{r.full.Round(time.Millisecond).String()}
	case dialectAzure:
		h["X-Ratelimit-Remaining-Requests"] = []string{strconv.Itoa(r.remaining)}
	}
}

// ParseRateLimit reads a rate limit written N/DURATION: "60/1m" (60
// requests a minute), "10/1s"; a bare N is per minute.
func ParseRateLimit(s string) (*RateLimit, error) {
	n, per, hasPer := strings.Cut(strings.TrimSpace(s), "/")
	rl := &RateLimit{Per: time.Minute}
	var err error
	if rl.Requests, err = strconv.Atoi(n); err != nil || rl.Requests <= 0 {
		return nil, fmt.Errorf("rate limit %q: want N/DURATION such as 60/1m, N a whole number above 0", s)
	}
	if hasPer {
		if rl.Per, err = time.ParseDuration(per); err != nil || rl.Per <= 0 {
			return nil, fmt.Errorf("rate limit %q: want N/DURATION such as 60/1m, DURATION above 0", s)
		}
	}
	return rl, nil
}
