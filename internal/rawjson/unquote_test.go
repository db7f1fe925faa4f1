package rawjson

import (
	stdjson "encoding/json"
	"strings"
	"testing"
)

// FuzzString checks String against encoding/json: the same string, or an
// error where encoding/json has one (String takes empty input for null).
func FuzzString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"tab\tnl\n\u00e9 \"q\" \\ \/"`, `"\ud83d\ude00"`, `"\ud83dx"`, `"\ude00\ud83d"`,
		`"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, "\"bad \xff\xfe utf8 \xe2\x82\"", "\"ctl \x01\"", `"bad \x"`, `"\u12"`,
		`"q"q"`, `"end\"`, ` "sp" `, `null`, `5`, `"` + strings.Repeat(`long line \"quoted\"\n`, 40) + `"`, "\"é ✓ 😀 \u2028\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if IsNull(b) && !isNullLiteral(b) {
			return // empty input is null here, an error there
		}
		got, err := String(b)
		var want string
		werr := stdjson.Unmarshal(b, &want)
		if (err == nil) != (werr == nil) {
			t.Fatalf("String(%q) = %q, %v; encoding/json %q, %v", b, got, err, want, werr)
		}
		if err == nil && got != want {
			t.Fatalf("String(%q) = %q, want %q", b, got, want)
		}
	})
}

func isNullLiteral(b []byte) bool { return string(trimSpace(b)) == "null" }

// FuzzSkipString checks that EachElement splits an array of strings where
// encoding/json does.
func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`["a","b\"","c\\","d\\\"e"]`, `["\\\\"]`, `["x\"]`, `[""]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want []stdjson.RawMessage
		if stdjson.Unmarshal(b, &want) != nil {
			return
		}
		var got []string
		if err := EachElement(b, func(e []byte) error { got = append(got, string(e)); return nil }); err != nil {
			t.Fatalf("EachElement(%q): %v", b, err)
		}
		if len(got) != len(want) {
			t.Fatalf("EachElement(%q) = %d elements, want %d", b, len(got), len(want))
		}
		for i := range got {
			if got[i] != strings.TrimSpace(string(want[i])) {
				t.Fatalf("EachElement(%q)[%d] = %s, want %s", b, i, got[i], want[i])
			}
		}
	})
}

func BenchmarkString(b *testing.B) {
	v := []byte(`"` + strings.Repeat("func main() {\\n\\tfmt.Println(\\\"héllo\\\")\\n}\\n// a plain comment line of code\\n", 2000) + `"`)
	b.SetBytes(int64(len(v)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := String(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidString(b *testing.B) {
	v := []byte(`"` + strings.Repeat("func main() {\\n\\tfmt.Println(\\\"héllo\\\")\\n}\\n// a plain comment line of code\\n", 2000) + `"`)
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		if !Valid(v) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkStringLibrary(b *testing.B) {
	v := []byte(`"` + strings.Repeat("func main() {\\n\\tfmt.Println(\\\"héllo\\\")\\n}\\n// a plain comment line of code\\n", 2000) + `"`)
	b.SetBytes(int64(len(v)))
	b.ReportAllocs()
	for b.Loop() {
		var s string
		if err := Unmarshal(v, &s); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSkipStringEnds(t *testing.T) {
	for _, bad := range []string{`["\`, `["a\`, `["a\"`, `["12345678\`, `["1234567\`} {
		if err := EachElement([]byte(bad), func([]byte) error { return nil }); err == nil {
			t.Errorf("EachElement(%s) = nil, want an error", bad)
		}
	}
}

// BenchmarkSkip is the walk a relayed request's body gets: the top-level
// fields of an agent's conversation, every message skipped, not decoded
// (walk); and the messages alone skipped a block at a time, as the walk
// skips them (blocks), and a byte at a time (bytes).
func BenchmarkSkip(b *testing.B) {
	msg := `{"role":"tool","tool_call_id":"call_1","content":"` + strings.Repeat("func main() {\\n\\tfmt.Println(\\\"héllo\\\")\\n}\\n// a plain comment line of code\\n", 30) + `"},`
	body := []byte(`{"model":"m","messages":[` + strings.Repeat(msg, 200) + `{"role":"user","content":"x"}],"max_tokens":9}`)
	at := strings.Index(string(body), "[")
	for _, c := range []struct {
		name string
		walk func() error
	}{
		{"walk", func() error { return EachField(body, func(k, v []byte) error { return nil }) }},
		{"blocks", func() error { _, err := skipBlocks(body, at); return err }},
		{"bytes", func() error { _, err := skipNested(body, at, 0); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := c.walk(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSkipStringOffsets: a string's closing quote and the escaped quotes
// before it are found at every offset of indexQuote's two words and past
// them, as encoding/json finds them.
func TestSkipStringOffsets(t *testing.T) {
	for a := range 40 {
		for b := range 20 {
			for _, esc := range []string{`\"`, `\\`, `\\\"`, `é`} {
				s := `"` + strings.Repeat("x", a) + esc + strings.Repeat("y", b) + `"`
				arr := []byte(`[` + s + `,"z"]`)
				var want []stdjson.RawMessage
				if err := stdjson.Unmarshal(arr, &want); err != nil {
					t.Fatalf("%s: %v", arr, err)
				}
				var got []string
				if err := EachElement(arr, func(e []byte) error { got = append(got, string(e)); return nil }); err != nil {
					t.Fatalf("EachElement(%s): %v", arr, err)
				}
				if len(got) != 2 || got[0] != s || got[1] != `"z"` {
					t.Fatalf("EachElement(%s) = %q, want [%s \"z\"]", arr, got, s)
				}
			}
		}
	}
}
