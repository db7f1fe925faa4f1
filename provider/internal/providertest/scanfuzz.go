package providertest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/llmguard/llmguard/internal/rawjson"
)

// FuzzScan checks an adapter's one-pass event scan against
// rawjson.Unmarshal into the same type T: where scan reads an event (ok),
// it reads what Unmarshal does, also on a scanner that read prev before
// (what it reuses). Shapes the scan leaves to Unmarshal (not ok) pass.
func FuzzScan[T any](f *testing.F, seeds []string, prev string, scan func([]byte) (*T, bool)) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want T
		werr := rawjson.Unmarshal(b, &want)
		for _, before := range []string{"", prev} {
			if before != "" {
				scan([]byte(before))
			}
			got, ok := scan(b)
			if !ok {
				continue
			}
			if werr != nil {
				t.Fatalf("scan read %q, Unmarshal: %v", b, werr)
			}
			if diff := cmp.Diff(want, *got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%s: read differently (-Unmarshal +scan):\n%s", b, diff)
			}
		}
	})
}

// FuzzScanShape checks an event scan that keeps the shape of the event it
// read (rawjson.Around) on events that are one of bases with other bytes
// in place of its one text (what mids seed): read after the base, an
// event reads as Unmarshal reads it, and as a scanner that read nothing
// before does. text says where the scan read the text of the event it read
// last: between offsets from and to, when it read exactly one.
func FuzzScanShape[T any](f *testing.F, bases, mids []string, scan func([]byte) (*T, bool), text func() (from, to int, one bool)) {
	for i, mid := range mids {
		f.Add(uint8(i), mid)
	}
	f.Fuzz(func(t *testing.T, which uint8, mid string) {
		base := []byte(bases[int(which)%len(bases)])
		_, ok := scan(base)
		from, to, one := text()
		if !ok || !one {
			t.Fatalf("base %s not read with one text", base)
		}
		doc := append(append(append([]byte(nil), base[:from]...), mid...), base[to:]...)
		got, ok := scan(doc)
		if !ok {
			return
		}
		after := *got
		var want T
		if err := rawjson.Unmarshal(doc, &want); err != nil {
			t.Fatalf("%s: read, Unmarshal: %v", doc, err)
		}
		if diff := cmp.Diff(want, after, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%s: read differently (-Unmarshal +scan):\n%s", doc, diff)
		}
	})
}

// ScanReads checks that an adapter's event scan reads each of seeds itself
// (read: a fresh scanner's ok) instead of leaving it to Unmarshal.
func ScanReads(t *testing.T, seeds []string, read func([]byte) bool) {
	t.Helper()
	for _, s := range seeds {
		if !read([]byte(s)) {
			t.Errorf("left to Unmarshal: %s", s)
		}
	}
}

// ScanAllocs checks that scan, on a scanner that read ev once, reads ev
// again with at most one allocation (the text it carries).
func ScanAllocs(t *testing.T, ev string, scan func([]byte)) {
	t.Helper()
	b := []byte(ev)
	scan(b)
	if n := testing.AllocsPerRun(100, func() { scan(b) }); n > 1 {
		t.Errorf("%v allocations per event, want at most 1", n)
	}
}
