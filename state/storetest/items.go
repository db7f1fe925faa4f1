package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/llmguard/llmguard/state"
)

// RunItems runs the conformance suite for a state.ItemStore against stores
// made by newStore, each subtest with a fresh, empty store bounded at least
// by 1000 items and 1 MiB.
func RunItems(t *testing.T, newStore func(t *testing.T) state.ItemStore) {
	t.Helper()
	ctx := context.Background()

	t.Run("MissingIsNil", func(t *testing.T) {
		st := newStore(t)
		got, err := st.GetItems(ctx, []string{"a/msg_1", "b/msg_2"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0] != nil || got[1] != nil {
			t.Errorf("GetItems on an empty store = %q", got)
		}
		if got, err := st.GetItems(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("GetItems(nil) = %q, %v", got, err)
		}
	})

	t.Run("PutThenGetInOrder", func(t *testing.T) {
		st := newStore(t)
		items := []state.Item{
			{Key: "s1/msg_1", Value: []byte(`{"type":"message"}`)},
			{Key: "s1/fc_2", Value: []byte(`{"type":"function_call"}`)},
		}
		if err := st.PutItems(ctx, items); err != nil {
			t.Fatal(err)
		}
		got, err := st.GetItems(ctx, []string{"s1/fc_2", "s2/msg_1", "s1/msg_1", "s1/fc_2"})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{`{"type":"function_call"}`, "", `{"type":"message"}`, `{"type":"function_call"}`}
		if len(got) != len(want) {
			t.Fatalf("got %d values for %d keys", len(got), len(want))
		}
		for i := range want {
			if string(got[i]) != want[i] || (want[i] == "") != (got[i] == nil) {
				t.Errorf("value %d = %q, want %q", i, got[i], want[i])
			}
		}
	})

	t.Run("PutReplaces", func(t *testing.T) {
		st := newStore(t)
		for _, v := range []string{"one", "two"} {
			if err := st.PutItems(ctx, []state.Item{{Key: "k", Value: []byte(v)}}); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := st.GetItems(ctx, []string{"k"}); err != nil || string(got[0]) != "two" {
			t.Errorf("GetItems = %q, %v", got, err)
		}
	})

	t.Run("ManyItems", func(t *testing.T) {
		st := newStore(t)
		var items []state.Item
		var keys []string
		for i := range 200 {
			k := fmt.Sprintf("scope/msg_%03d", i)
			items = append(items, state.Item{Key: k, Value: fmt.Appendf(nil, `{"n":%d}`, i)})
			keys = append(keys, k)
		}
		if err := st.PutItems(ctx, items); err != nil {
			t.Fatal(err)
		}
		got, err := st.GetItems(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if want := fmt.Sprintf(`{"n":%d}`, i); string(v) != want {
				t.Fatalf("value %d = %q, want %q", i, v, want)
			}
		}
	})

	t.Run("CancelledContext", func(t *testing.T) {
		st := newStore(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := st.PutItems(cctx, []state.Item{{Key: "k", Value: []byte("v")}}); err == nil {
			t.Error("PutItems with a cancelled context succeeded")
		}
		if _, err := st.GetItems(cctx, []string{"k"}); err == nil {
			t.Error("GetItems with a cancelled context succeeded")
		}
	})
}
