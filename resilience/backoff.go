package resilience

import (
	"math/rand/v2"
	"time"
)

// backoff returns the wait before retry number n (1 for the first retry):
// full jitter, uniform in [0, min(maxDelay, base·2^(n-1))], and never shorter
// than hint, the wait the server asked for. The result exceeds maxDelay only
// when hint does.
func backoff(n int, base, maxDelay, hint time.Duration, r *rand.Rand) time.Duration {
	ceil := base
	for i := 1; i < n && ceil < maxDelay; i++ {
		ceil *= 2
	}
	if ceil > maxDelay {
		ceil = maxDelay
	}
	var d time.Duration
	if ceil > 0 {
		d = time.Duration(r.Int64N(int64(ceil) + 1))
	}
	if d < hint {
		d = hint
	}
	return d
}
