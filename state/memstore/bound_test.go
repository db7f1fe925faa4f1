package memstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
)

func fail(reason string) func(b *state.Breaker) bool {
	return func(b *state.Breaker) bool { b.WindowCalls++; b.Reason = reason; return true }
}

// 20,000 targets a client invented leave at most MaxRecords records (the
// issue's chaos run left 20,000).
func TestRecordsBoundedByCount(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	for i := range 20000 {
		if _, err := st.UpdateBreaker(ctx, fmt.Sprintf("target/openai/invented-%d", i), fail("404 not_found_error")); err != nil {
			t.Fatal(err)
		}
	}
	keys := memstore.Keys(st)
	if len(keys) > memstore.DefaultMaxRecords {
		t.Errorf("%d records after 20000 invented targets, want at most %d", len(keys), memstore.DefaultMaxRecords)
	}
	if len(keys) < memstore.DefaultMaxRecords/2 {
		t.Errorf("only %d records kept: the bound evicts too eagerly", len(keys))
	}
}

// Long keys and reasons count by their bytes.
func TestRecordsBoundedByBytes(t *testing.T) {
	ctx := context.Background()
	st := memstore.NewWith(&memstore.Options{MaxRecords: 100000, MaxBytes: 1 << 20})
	long := strings.Repeat("x", 16<<10)
	for i := range 200 { // 3.2 MiB of keys
		st.UpdateBreaker(ctx, fmt.Sprintf("target/p/%d-%s", i, long), fail("r"))
	}
	keys := memstore.Keys(st)
	total := 0
	for _, k := range keys {
		total += len(k)
	}
	if total > 1<<20 {
		t.Errorf("%d bytes of keys kept, want at most 1 MiB", total)
	}
}

// A record nobody touched for IdleTTL expires, unless it is open (or
// cooling down) until later; an open breaker survives a flood of new keys.
func TestRecordsExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := memstore.NewWith(&memstore.Options{MaxRecords: 160, IdleTTL: time.Hour})
		st.UpdateBreaker(ctx, "target/p/idle", fail("x"))
		st.UpdateBreaker(ctx, "target/p/open", func(b *state.Breaker) bool {
			b.State, b.OpenUntil = state.Open, time.Now().Add(3*time.Hour)
			return true
		})
		time.Sleep(2 * time.Hour)
		if b, _ := st.Breaker(ctx, "target/p/idle"); b.WindowCalls != 0 {
			t.Errorf("idle record survived its TTL: %+v", b)
		}
		for i := range 5000 {
			st.UpdateBreaker(ctx, fmt.Sprintf("target/p/flood-%d", i), fail("x"))
		}
		if b, _ := st.Breaker(ctx, "target/p/open"); b.State != state.Open {
			t.Errorf("an open breaker was lost to a flood of new keys: %+v", b)
		}
		keys := memstore.Keys(st)
		if len(keys) > 160 {
			t.Errorf("%d records, want at most 160", len(keys))
		}
	})
}
