package providertest

import (
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
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

// ReadsInPlace checks that a stream that is not relayed reads its events
// where they were read (httpcall.Borrower), not a copy of each: read by
// open, a stream of head, 1,000 times ev (each with the text text) and
// tail allocates about its texts (at most 64 bytes an event), and relayed
// (its events kept) more than 100 bytes an event.
func ReadsInPlace(t *testing.T, head, ev, tail, text string, open func(body io.Reader, relay bool) provider.Stream) {
	t.Helper()
	const events = 1000
	body := head + strings.Repeat(ev, events) + tail
	for _, relay := range []bool{false, true} {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before, texts := ms.TotalAlloc, 0
		st := open(strings.NewReader(body), relay)
		for {
			c, err := st.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Text == text {
				texts++
			}
		}
		runtime.ReadMemStats(&ms)
		perEvent := (ms.TotalAlloc - before) / events
		if texts != events {
			t.Errorf("relay %v: %d texts read, want %d", relay, texts, events)
		}
		if perEvent > 64 && !relay {
			t.Errorf("%d bytes allocated an event (%d bytes each): want a text's (at most 64)", perEvent, len(ev))
		}
		if perEvent < 100 && relay {
			t.Errorf("relay: %d bytes allocated an event: the events are kept, %d bytes each", perEvent, len(ev))
		}
	}
}
