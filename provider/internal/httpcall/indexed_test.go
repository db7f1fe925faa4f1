package httpcall

import "testing"

// TestIndexed: an entry is found by its index, appended when new, and
// none is made past the bound.
func TestIndexed(t *testing.T) {
	type entry struct{ index int }
	var list []*entry
	at := func(i int) *entry {
		return Indexed(&list, i, 2, func(e *entry) int { return e.index }, func(i int) *entry { return &entry{index: i} })
	}
	a, b := at(5), at(0)
	if a == nil || b == nil || a.index != 5 || b.index != 0 {
		t.Fatalf("at(5), at(0) = %v, %v", a, b)
	}
	if at(5) != a || at(0) != b {
		t.Error("an index asked again gave another entry")
	}
	if e := at(7); e != nil || len(list) != 2 {
		t.Errorf("past the bound: %v, %d entries; want nil, 2", e, len(list))
	}
}
