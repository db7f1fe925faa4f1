package redisstore_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
	"github.com/llmguard/llmguard/state/redisstore/redistest"
)

// latency runs op b.N times, reports its p50 and p99 and returns how many
// times it ran.
func latency(b *testing.B, op func(i int)) int {
	var lat []time.Duration
	i := 0
	for b.Loop() {
		t := time.Now()
		op(i)
		lat = append(lat, time.Since(t))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
	return i
}

// BenchmarkLease is what a call on a target with a shared max_concurrency
// adds: one lease taken and given back, on memstore and on Redis.
func BenchmarkLease(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, st state.LeaseStore) {
		latency(b, func(i int) {
			id := strconv.Itoa(i)
			if ok, err := st.AcquireLease(ctx, "lease/openai/gpt-4.1", id, 8, 15*time.Second); err != nil || !ok {
				b.Fatal(ok, err)
			}
			st.ReleaseLease(ctx, "lease/openai/gpt-4.1", id)
		})
	}
	b.Run("memstore", func(b *testing.B) { run(b, memstore.NewLeases()) })
	b.Run("redis", func(b *testing.B) { run(b, newStore(b, redistest.Start(b), nil)) })
}

// BenchmarkPace is what a paced call adds: its turn taken from the
// target's bucket and its answer's announcement written back (two
// updates of the target's record), on memstore and on Redis.
func BenchmarkPace(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, st state.Store) {
		latency(b, func(int) {
			st.UpdateBreaker(ctx, "target/openai/gpt-4.1", func(r *state.Breaker) bool {
				r.Pace.Known, r.Pace.Tokens, r.Pace.At = true, r.Pace.Tokens-1, time.Now()
				return true
			})
			st.UpdateBreaker(ctx, "target/openai/gpt-4.1", func(r *state.Breaker) bool {
				r.Pace.Tokens, r.Pace.Size, r.Pace.Rate = 100, 100, 10
				return true
			})
		})
	}
	b.Run("memstore", func(b *testing.B) { run(b, memstore.New()) })
	b.Run("redis", func(b *testing.B) { run(b, newStore(b, redistest.Start(b), nil)) })
}
