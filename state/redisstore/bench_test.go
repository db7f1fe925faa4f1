package redisstore_test

import (
	"context"
	"testing"

	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
	"github.com/llmguard/llmguard/state/redisstore/redistest"
)

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
