package memstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
	"github.com/llmguard/llmguard/state/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) state.Store { return memstore.New() })
}

func TestResultsConformance(t *testing.T) {
	storetest.RunResults(t, func(t *testing.T) state.ResultStore { return memstore.NewResults() })
}

func TestLeasesConformance(t *testing.T) {
	storetest.RunLeases(t, func(t *testing.T) state.LeaseStore { return memstore.NewLeases() })
}

func Example() {
	st := memstore.New()
	ctx := context.Background()
	b, _ := st.UpdateBreaker(ctx, "target/openai/gpt-4.1", func(b *state.Breaker) bool {
		b.WindowCalls++
		return true
	})
	fmt.Println(b.WindowCalls)
	// Output: 1
}

func BenchmarkUpdateNoWrite(b *testing.B) {
	st := memstore.New()
	ctx := context.Background()
	fn := func(b *state.Breaker) bool { return false }
	for b.Loop() {
		_, _ = st.UpdateBreaker(ctx, "target/openai/gpt-4.1", fn)
	}
}
