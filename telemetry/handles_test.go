package telemetry

import (
	"strconv"
	"testing"
)

// TestHandlesBound: the cache keeps at most maxHandles children and still
// answers every lookup with the vector's child, cached or not.
func TestHandlesBound(t *testing.T) {
	calls := 0
	h := newHandles(2, func(v ...string) string { calls++; return v[0] + "/" + v[1] })
	for i := range maxHandles + 10 {
		k := labelKey{strconv.Itoa(i), "x"}
		if got, want := h.get(k), strconv.Itoa(i)+"/x"; got != want {
			t.Fatalf("get(%v) = %q, want %q", k, got, want)
		}
	}
	if len(h.m) != maxHandles {
		t.Errorf("cached %d children, want %d", len(h.m), maxHandles)
	}
	calls = 0
	h.get(labelKey{"0", "x"})
	h.get(labelKey{strconv.Itoa(maxHandles + 5), "x"})
	if calls != 1 {
		t.Errorf("the vector was asked %d times for one cached and one uncached child, want 1", calls)
	}
}
