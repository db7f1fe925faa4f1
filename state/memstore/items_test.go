package memstore

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/storetest"
)

func TestItemsConformance(t *testing.T) {
	storetest.RunItems(t, func(t *testing.T) state.ItemStore { return NewItems(nil) })
}

// Nothing a client sends grows the store past its bounds: a flood of new
// items (many small ones, then a few large ones) leaves it within MaxItems
// and MaxBytes, and an item over an eighth of MaxBytes is not kept at all.
func TestItemsBounded(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		n     int
		value int
	}{
		{"many small", 20_000, 10},
		{"fewer large", 5_000, 4000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := NewItems(&ItemOptions{MaxItems: 1000, MaxBytes: 1 << 20})
			v := make([]byte, tt.value)
			for i := range tt.n {
				if err := s.PutItems(ctx, []state.Item{{Key: fmt.Sprintf("scope/msg_%d", i), Value: v}}); err != nil {
					t.Fatal(err)
				}
			}
			n, b := s.Size()
			if n > 1000 || b > 1<<20 || n == 0 {
				t.Errorf("after %d puts of %d bytes: %d items, %d bytes (bounds 1000, %d)", tt.n, tt.value, n, b, 1<<20)
			}
			t.Logf("after %d puts of %d bytes: %d items, %d bytes", tt.n, tt.value, n, b)
		})
	}
	s := NewItems(&ItemOptions{MaxItems: 1000, MaxBytes: 1 << 20})
	big := make([]byte, 1<<20/8)
	if err := s.PutItems(ctx, []state.Item{{Key: "k", Value: big}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetItems(ctx, []string{"k"}); got[0] != nil {
		t.Error("an item over an eighth of MaxBytes was kept")
	}
}

// An item nobody reads for IdleTTL is gone; reading it keeps it alive.
func TestItemsIdleTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := NewItems(&ItemOptions{IdleTTL: time.Hour})
		s.PutItems(ctx, []state.Item{{Key: "read", Value: []byte("r")}, {Key: "idle", Value: []byte("i")}})
		for range 3 {
			time.Sleep(40 * time.Minute)
			if got, _ := s.GetItems(ctx, []string{"read"}); got[0] == nil {
				t.Fatal("an item read every 40 minutes expired")
			}
		}
		if got, _ := s.GetItems(ctx, []string{"idle"}); got[0] != nil {
			t.Error("an item idle for 2 hours is still there")
		}
		time.Sleep(61 * time.Minute)
		if got, _ := s.GetItems(ctx, []string{"read"}); got[0] != nil {
			t.Error("an item idle for 61 minutes is still there")
		}
		if n, _ := s.Size(); n != 0 {
			t.Errorf("%d items left after they all expired", n)
		}
	})
}

// The newest item is kept whatever the store held before, even items read
// again and again: it is the one a client's next turn references.
func TestItemsKeepNewest(t *testing.T) {
	ctx := context.Background()
	s := NewItems(&ItemOptions{MaxItems: 20, MaxBytes: 1 << 20})
	for i := range 20 {
		k := fmt.Sprintf("s/old_%d", i)
		s.PutItems(ctx, []state.Item{{Key: k, Value: []byte("v")}})
		for range 5 {
			s.GetItems(ctx, []string{k})
		}
	}
	for i := range 100 {
		k := fmt.Sprintf("s/new_%d", i)
		s.PutItems(ctx, []state.Item{{Key: k, Value: []byte("v")}})
		if got, _ := s.GetItems(ctx, []string{k}); got[0] == nil {
			t.Fatalf("new item %d was not kept", i)
		}
	}
	if n, _ := s.Size(); n != 20 {
		t.Errorf("%d items, want 20", n)
	}
}
