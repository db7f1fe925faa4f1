package rawjson

import (
	stdjson "encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/segmentio/encoding/json"
)

// The encoders write strings with the JSON library's AppendEscape; these
// tests pin that it writes them byte for byte as encoding/json does (the
// pass-through and golden tests depend on it).

var seeds = []string{"", "plain", `q"uote\back`, "tab\tnl\nret\r", "\x00\x1f ctl \x7f", "<b>&amp;</b>", "é ✓ 😀", "bad \xff\xfe utf8", "sep \u2028 \u2029",
	"a longer plain string", "a longer string with \"quotes\" and <tags>", "\b\f"}

// std encodes s as encoding/json does without HTML escaping.
func std(s string) string {
	var b strings.Builder
	e := stdjson.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func FuzzAppendEscape(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := json.AppendEscape([]byte("pre"), s, 0)
		if want := std(s); string(got) != "pre"+want || !utf8.Valid(got) {
			t.Fatalf("AppendEscape(%q) = %s, want pre%s", s, got, want)
		}
		got = json.AppendEscape([]byte("pre"), s, json.EscapeHTML)
		if want, _ := stdjson.Marshal(s); string(got) != "pre"+string(want) {
			t.Fatalf("AppendEscape(%q, EscapeHTML) = %s, want pre%s", s, got, want)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	buf := make([]byte, 0, 256)
	s := "Mock answer from claude-sonnet-4-5: the quick brown fox \"jumps\" over <the> lazy dog"
	b.ReportAllocs()
	for b.Loop() {
		buf = json.AppendEscape(buf[:0], s, 0)
	}
}
