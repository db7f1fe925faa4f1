package resilience

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestBackoffBounds(t *testing.T) {
	tests := []struct {
		name                  string
		base, maxDelay, hint  time.Duration
		wantMin, wantMaxBound time.Duration
	}{
		{"no hint", 500 * time.Millisecond, 30 * time.Second, 0, 0, 30 * time.Second},
		{"hint below max", 500 * time.Millisecond, 30 * time.Second, 2 * time.Second, 2 * time.Second, 30 * time.Second},
		{"hint above max", 500 * time.Millisecond, 30 * time.Second, 45 * time.Second, 45 * time.Second, 45 * time.Second},
		{"hint equals max", time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second},
		{"tiny base", time.Nanosecond, time.Millisecond, 0, 0, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 11))
			sawAboveHint := false
			for n := 1; n <= 40; n++ {
				for range 200 {
					d := backoff(n, tt.base, tt.maxDelay, tt.hint, r)
					if d < tt.wantMin {
						t.Fatalf("retry %d: wait %s below the server hint %s", n, d, tt.hint)
					}
					if d > tt.wantMaxBound {
						t.Fatalf("retry %d: wait %s above max(max_delay, hint) = %s", n, d, tt.wantMaxBound)
					}
					// Before the exponential reaches max_delay it stays under base·2^(n-1).
					if ceil := tt.base << (n - 1); n < 20 && ceil < tt.maxDelay && d > max(ceil, tt.hint) {
						t.Fatalf("retry %d: wait %s above the exponential ceiling %s", n, d, ceil)
					}
					if d > tt.hint {
						sawAboveHint = true
					}
				}
			}
			if tt.wantMaxBound > tt.wantMin && !sawAboveHint {
				t.Errorf("jitter never exceeded the hint: backoff is not jittered")
			}
		})
	}
}

func TestBackoffFullJitterSpreads(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	var lo, hi int
	for range 1000 {
		d := backoff(3, 100*time.Millisecond, time.Minute, 0, r) // ceiling 400ms
		if d < 200*time.Millisecond {
			lo++
		} else {
			hi++
		}
	}
	// Full jitter is uniform on [0, 400ms]: both halves get a fair share.
	if lo < 350 || hi < 350 {
		t.Errorf("halves %d/%d: not uniform full jitter", lo, hi)
	}
}
