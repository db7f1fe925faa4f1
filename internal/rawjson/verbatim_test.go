package rawjson

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestVerbatim(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`""`, true},
		{`"plain text"`, true},
		{`"line\nbreak \"quoted\" tab\t \\ \/ \u00e9 \u2028"`, true},
		{"\"h\u00e9llo \u2014 \U0001F600\"", true},
		{`"<b>&</b>"`, true},
		{`"\ud83d\ude00 \uD83D\uDE00"`, true}, // pairs
		{`"\udc00"`, false},
		{`"\ud83d"`, false},
		{`"\ud83d\u0041"`, false},
		{`"\ude00\ud83d"`, false},
		{`"\ud83d\ud83d\ude00"`, false},
		{`"\ud83d\n"`, false},
		{`"\\ud800"`, true}, // a backslash, then text
		{"\"\xff\"", false},
		{"\"\xe2\x82\"", false},
		{"\"a\nb\"", false},
		{`"\x"`, false},
		{`"\u12"`, false},
		{`"abc`, false},
		{`"a"b"`, false},
		{`"a" `, false},
		{` "a"`, false},
		{`"\"`, false},
		{`null`, false},
		{`1`, false},
		{`"`, false},
	}
	for _, tt := range tests {
		if got := Verbatim([]byte(tt.in)); got != tt.want {
			t.Errorf("Verbatim(%q) = %v, want %v", tt.in, got, tt.want)
		}
		if got := cursorVerbatim([]byte(tt.in)); got != tt.want {
			t.Errorf("Cursor.Verbatim of %q whole = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// cursorVerbatim reports whether a Cursor's Verbatim reads b whole.
func cursorVerbatim(b []byte) bool {
	var c Cursor
	c.Reset(b)
	v := c.Verbatim()
	return v != nil && string(v) == string(b)
}

// FuzzVerbatim: Verbatim is exactly "a JSON string as encoding/json reads
// it, whose bytes are valid UTF-8 and whose escapes name no lone
// surrogate".
func FuzzVerbatim(f *testing.F) {
	for _, s := range []string{`""`, `"a\nb"`, `"\ud83d\ude00"`, `"\\ud800"`, "\"\xff\"", `"é\u00e9"`, `"a\"b"`, `"\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s string
		want := len(b) > 1 && b[0] == '"' && b[len(b)-1] == '"' && json.Unmarshal(b, &s) == nil && json.Valid(b) &&
			utf8.Valid(b) && !loneSurrogate(string(b))
		if got := Verbatim(b); got != want {
			t.Fatalf("Verbatim(%q) = %v, want %v", b, got, want)
		}
		if got := cursorVerbatim(b); got != want {
			t.Fatalf("Cursor.Verbatim of %q whole = %v, want %v", b, got, want)
		}
	})
}

// loneSurrogate reports whether the JSON string s has a \u escape of a
// UTF-16 surrogate that is not a high half followed at once by an escaped
// low half (read escape by escape).
func loneSurrogate(s string) bool {
	pending := false // the last escape was a high half
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			if pending {
				return true
			}
			continue
		}
		r := rune(-1)
		if s[i+1] == 'u' && i+6 <= len(s) {
			r = hex(s[i+2 : i+6])
		}
		switch {
		case pending && r >= 0xdc00 && r <= 0xdfff:
			pending = false
		case pending:
			return true
		case r >= 0xd800 && r <= 0xdbff:
			pending = true
		case r >= 0xdc00 && r <= 0xdfff:
			return true
		}
		if r >= 0 {
			i += 5
		} else {
			i++ // the escaped byte
		}
	}
	return pending
}

// hex is the value of four hex digits, or -1.
func hex(s string) rune {
	var r rune
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | (c - '0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | (c - 'a' + 10)
		default:
			return -1
		}
	}
	return r
}

// BenchmarkVerbatim is the check a lean decoding gives each text it
// leaves in the client's body: code (an escape every eight bytes or so),
// prose and CJK text.
func BenchmarkVerbatim(b *testing.B) {
	for _, tt := range []struct{ name, text string }{
		{"code", "func main() {\\n\\tfmt.Println(\\\"héllo\\\")\\n}\\n// a plain comment line of code\\n"},
		{"prose", "The gateway reads the body once and sends it on; a \\\"quoted\\\" word here and there.\\n"},
		{"cjk", "网关读取请求体一次，然后原样发送。"},
	} {
		v := []byte(`"` + strings.Repeat(tt.text, 2000) + `"`)
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(v)))
			for b.Loop() {
				if !Verbatim(v) {
					b.Fatal("not verbatim")
				}
			}
		})
	}
}

// verbatimScalar is verbatimEnd by the byte walk alone.
func verbatimScalar(b []byte, i int) (int, bool) {
	if len(b)-i < 2 || b[i] != '"' {
		return 0, false
	}
	end, ok, _ := verbatimRun(b, i+1, len(b))
	return end, ok
}

// checkVerbatimBlocks checks that verbatimEnd, 64 bytes a step, ends each
// string in b that starts at a quote among the first where the byte walk
// does, and judges it the same.
func checkVerbatimBlocks(t *testing.T, b []byte) {
	t.Helper()
	checked := 0
	for i := 0; i < len(b) && checked < 16; i++ {
		if b[i] != '"' {
			continue
		}
		checked++
		wantEnd, want := verbatimScalar(b, i)
		if gotEnd, got := verbatimEnd(b, i); got != want || got && gotEnd != wantEnd {
			t.Fatalf("verbatimEnd(%q, %d) = %d, %v; the byte walk: %d, %v", b, i, gotEnd, got, wantEnd, want)
		}
	}
}

// FuzzVerbatimBlocks: on any input, and it repeated past a few blocks (so
// that escapes, runes and quotes cross the blocks' edges), verbatimEnd
// judges every string as the byte walk does.
func FuzzVerbatimBlocks(f *testing.F) {
	for _, s := range []string{`"a\"b"`, `"\\\\\"x"`, `"é\u00e9\ud83d\ude00"`, "\"\x01\"", `"\q"`, `"` + strings.Repeat(`\\`, 40) + `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkVerbatimBlocks(t, in)
		checkVerbatimBlocks(t, bytes.Repeat(in, 1+400/(len(in)+1)))
	})
}

// TestVerbatimBlocksEdges: strings of escapes, runes, control characters
// and quotes, at every alignment to the blocks, judged as the byte walk
// judges them; and strings of nothing but ASCII and one-byte escapes
// walked to their end by the blocks alone.
func TestVerbatimBlocksEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 19))
	const fast = 10 // pieces[:fast] are what scanVerbatim walks through
	pieces := []string{`\"`, `\\`, `\\\"`, `\\\\\"`, `x`, `\n`, `\t`, `\/`, ` `, `abc`,
		`é`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, "\x01", "\xff", `\q`, `"`, `\`, "\xe2\x82", `—`}
	for n := range 600 {
		set := pieces
		if n%2 == 0 {
			set = pieces[:fast]
		}
		var sb strings.Builder
		sb.WriteString(strings.Repeat(" ", n%64) + `"`)
		for sb.Len() < 64+r.IntN(400) {
			if k := r.IntN(len(set) + 8); k < len(set) {
				sb.WriteString(set[k])
			} else {
				sb.WriteString("abc")
			}
		}
		sb.WriteString(`"` + strings.Repeat("x", r.IntN(80)))
		b := []byte(sb.String())
		checkVerbatimBlocks(t, b)
		if i := n % 64; haveBlocks && n%2 == 0 {
			var st verbatimState
			for j := i + 1; st.status != verbatimDone; {
				k := scanVerbatim(&b[j], len(b)-j, &st)
				if st.status == verbatimSlow {
					t.Fatalf("scanVerbatim(%q) left a block of one-byte escapes to the byte walk", b[j:])
				}
				if st.status == verbatimOut {
					break
				}
				if st.status == verbatimDone && j+k != bytes.LastIndexByte(b, '"')+1 {
					t.Fatalf("scanVerbatim(%q) ended at %d", b[i:], j+k)
				}
			}
		}
	}
}

// TestVerbatimBlocksRunes: strings of runes, valid and not (overlong,
// surrogates, past U+10FFFF, cut short, stray continuations), among text
// and one-byte escapes, at every alignment to the blocks, some with a \u
// escape that sends the blocks back to the byte walk inside a rune, judged
// as the byte walk judges them; and those of valid runes alone vouched
// for by the blocks (no utf8.Valid after them).
func TestVerbatimBlocksRunes(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 19))
	valid := []string{`x`, `\n`, `\"`, `\\`, ` `, `abc`, `é`, `—`, `中`, "\U0001F600", "\u07ff", "\uffff", "\U0010ffff", "\u0800", "\U00010000"}
	invalid := []string{"\xff", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xed\xa0\x80", "\xed\xbf\xbf",
		"\xf0\x80\x80\x80", "\xf0\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xf8\x88\x80\x80\x80",
		"\xe2\x82", "\xc3", "\xf0\x9f\x98", "\x80", "\xbf\xbf", "\xc3\xa9\xa9"}
	for n := range 2000 {
		var sb strings.Builder
		sb.WriteString(strings.Repeat(" ", n%64) + `"`)
		bad := n%3 == 0
		for sb.Len() < 64+r.IntN(300) {
			switch k := r.IntN(100); {
			case bad && k < 2:
				sb.WriteString(invalid[r.IntN(len(invalid))])
			case n%5 == 0 && k < 4:
				sb.WriteString(`\u0041`)
			default:
				sb.WriteString(valid[r.IntN(len(valid))])
			}
		}
		sb.WriteString(`"` + strings.Repeat("x", r.IntN(80)))
		b := []byte(sb.String())
		checkVerbatimBlocks(t, b)
		if i := n % 64; haveBlocks && !bad && n%5 != 0 {
			var st verbatimState
			if scanVerbatim(&b[i+1], len(b)-i-1, &st); st.status == verbatimSlow {
				t.Fatalf("scanVerbatim(%q) left a block to the byte walk", b[i+1:])
			}
			if st.bad != 0 {
				t.Fatalf("scanVerbatim(%q) did not vouch for its valid runes", b[i:])
			}
		}
	}
}

// TestVerbatimRuneAtSlowBlock: a rune that the blocks cut, the next block
// left to the byte walk (a \u escape), is read whole by the byte walk.
func TestVerbatimRuneAtSlowBlock(t *testing.T) {
	for k := range 130 {
		b := []byte(`"` + strings.Repeat("a", 30) + `\n` + strings.Repeat("a", k) + "é" + `\u0041` + strings.Repeat("b", 200) + `"`)
		if !Verbatim(b) {
			t.Errorf("Verbatim of a string with é at %d = false", 33+k)
		}
	}
}
