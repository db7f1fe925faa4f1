package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
	"github.com/llmguard/llmguard/state/redisstore/redistest"
)

// perCall is what the engine asks of its store for one successful call on
// a healthy target: it reads the target's and the key's records (quiet, so
// no write) before the attempt, and reports the success to both after
// (each report rolls the window and counts the call: a write).
func perCall(ctx context.Context, st state.Store) {
	st.Breaker(ctx, "target/openai/gpt-4.1")
	st.Breaker(ctx, "key/openai/0")
	ok := func(b *state.Breaker) bool {
		if b.WindowStart.IsZero() {
			b.WindowStart = time.Now()
		}
		b.WindowCalls++
		return true
	}
	st.UpdateBreaker(ctx, "target/openai/gpt-4.1", ok)
	st.UpdateBreaker(ctx, "key/openai/0", ok)
}

// BenchmarkPerCall is the store's cost per engine call (perCall), on
// memstore and on a redis-server on loopback, with the p50 and p99 of the
// calls (one replica, one caller at a time: the latency a request sees;
// -cpu and RunParallel are for throughput, not measured here).
func BenchmarkPerCall(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, st state.Store) { latency(b, func(int) { perCall(ctx, st) }) }
	b.Run("memstore", func(b *testing.B) { run(b, memstore.New()) })
	b.Run("redis", func(b *testing.B) { run(b, newStore(b, redistest.Start(b), nil)) })
}

// BenchmarkUpdate is one UpdateBreaker that writes, on memstore and on
// Redis (one round trip when the replica's guess of the record is right).
func BenchmarkUpdate(b *testing.B) {
	ctx := context.Background()
	fn := func(r *state.Breaker) bool { r.WindowCalls++; return true }
	run := func(b *testing.B, st state.Store) {
		latency(b, func(int) {
			if _, err := st.UpdateBreaker(ctx, "target/openai/gpt-4.1", fn); err != nil {
				b.Fatal(err)
			}
		})
	}
	b.Run("memstore", func(b *testing.B) { run(b, memstore.New()) })
	b.Run("redis", func(b *testing.B) { run(b, newStore(b, redistest.Start(b), nil)) })
}

// BenchmarkUpdateParallel is UpdateBreaker on distinct keys from many
// goroutines, on memstore and on Redis (rueidis pipelines them over its
// connections): throughput, not latency.
func BenchmarkUpdateParallel(b *testing.B) {
	ctx := context.Background()
	fn := func(r *state.Breaker) bool { r.WindowCalls++; return true }
	keys := []string{"target/a/m", "target/b/m", "target/c/m", "target/d/m", "target/e/m", "target/f/m", "target/g/m", "target/h/m"}
	run := func(b *testing.B, st state.Store) {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				i++
				st.UpdateBreaker(ctx, keys[i%len(keys)], fn)
			}
		})
	}
	b.Run("memstore", func(b *testing.B) { run(b, memstore.New()) })
	b.Run("redis", func(b *testing.B) { run(b, newStore(b, redistest.Start(b), nil)) })
}
