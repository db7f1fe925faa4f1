package rawjson

import (
	"bytes"
	stdjson "encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// FuzzSkipBlocks checks that skipBlocks ends every object and array where
// skipNested does, or fails where it fails, on any input: its bytes, and
// them repeated past a few blocks (so that strings, escapes and brackets
// cross the blocks' edges), from each bracket among the first; and that
// the block scan takes valid JSON to its end without falling back.
func FuzzSkipBlocks(f *testing.F) {
	for _, s := range []string{`[]`, `{"a":"b\"c"}`, `["\\\\",{"x":[1,2]}]`, `[\"a"]`, `[{"a":"\`, `["` + strings.Repeat(`\\\"`, 30) + `"]`,
		`{"k":"` + strings.Repeat("x", 62) + `\"` + `"}`, `[` + strings.Repeat(`{"c":"}]"},`, 20) + `0]`, `["a\\"]"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, b := range [][]byte{in, bytes.Repeat(in, 1+300/(len(in)+1))} {
			checked := 0
			for i := 0; i < len(b) && checked < 16; i++ {
				if b[i] != '{' && b[i] != '[' {
					continue
				}
				checked++
				want, werr := skipNested(b, i, 0)
				got, err := skipBlocks(b, i)
				if got != want || (err == nil) != (werr == nil) {
					t.Fatalf("skipBlocks(%q, %d) = %d, %v; skipNested %d, %v", b, i, got, err, want, werr)
				}
				var st blockState
				if haveBlocks && werr == nil && stdjson.Valid(b[i:want]) {
					if scanBlocks(&b[i], want-i, &st); st.status == blocksOdd {
						t.Fatalf("scanBlocks(%q) fell back on valid JSON", b[i:want])
					}
				}
			}
		}
	})
}

// TestSkipBlocksEdges: conversations with runs of backslashes, escaped
// quotes and brackets in strings, at every alignment to the blocks, end
// where skipNested ends them without falling back to it (valid JSON has
// no backslash outside a string), and truncated they fail as it fails.
func TestSkipBlocksEdges(t *testing.T) {
	if !haveBlocks {
		t.Skip("no block scan on this CPU")
	}
	r := rand.New(rand.NewPCG(1, 19))
	pieces := []string{`\"`, `\\`, `\\\"`, `\\\\\"`, `[`, `]`, `{`, `}`, `x`, `é`, `\n`, `\u00e9`, ` `, `\\\\`}
	quoted := []string{`[`, `]`, `{`, `}`, `x`, `é`, ` `, `\"`} // a backslash only before a quote
	for n := range 300 {
		set := pieces
		if n%2 == 1 {
			set = quoted
		}
		var msgs []string
		for range 1 + r.IntN(8) {
			var s strings.Builder
			for range r.IntN(200) {
				s.WriteString(set[r.IntN(len(set))])
			}
			msgs = append(msgs, `{"role":"user","content":"`+s.String()+`","n":[1,{"a":[]}]}`)
		}
		doc := `[` + strings.Join(msgs, ",") + `]`
		for pad := range 64 {
			b := []byte(strings.Repeat(" ", pad) + doc + `,"tail":1}`)
			want, werr := skipNested(b, pad, 0)
			got, err := skipBlocks(b, pad)
			if werr != nil || got != want || err != nil {
				t.Fatalf("doc %d pad %d: skipBlocks = %d, %v; skipNested %d, %v", n, pad, got, err, want, werr)
			}
			var st blockState
			if scanBlocks(&b[pad], len(b)-pad, &st); st.status == blocksOdd {
				t.Fatalf("doc %d pad %d: the block scan fell back on valid JSON", n, pad)
			}
			cut := b[:pad+1+r.IntN(len(doc)-1)]
			want, werr = skipNested(cut, pad, 0)
			got, err = skipBlocks(cut, pad)
			if got != want || (err == nil) != (werr == nil) {
				t.Fatalf("doc %d pad %d cut at %d: skipBlocks = %d, %v; skipNested %d, %v", n, pad, len(cut), got, err, want, werr)
			}
		}
	}
}
