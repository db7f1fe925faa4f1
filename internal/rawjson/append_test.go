package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

var seeds = []string{"", "plain", `q"uote\back`, "tab\tnl\nret\r", "\x00\x1f ctl \x7f", "<b>&amp;</b>", "é ✓ 😀", "bad \xff\xfe utf8", "sep \u2028 \u2029"}

// std encodes s as encoding/json does without HTML escaping.
func std(s string) string {
	var b strings.Builder
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range seeds {
		got := AppendString([]byte("x"), s)
		want := std(s)
		if string(got) != "x"+want {
			t.Errorf("%q: got %s, want x%s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString(nil, s)
		if want := std(s); string(got) != want || !utf8.Valid(got) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}

func TestAppendStringHTMLMatchesMarshal(t *testing.T) {
	for _, s := range append(seeds, "<", "a&&b", "<<>>", "\"<\"", "x\u2028<") {
		got := AppendStringHTML([]byte("x"), s)
		want, _ := json.Marshal(s)
		if string(got) != "x"+string(want) {
			t.Errorf("%q: got %s, want x%s", s, got, want)
		}
	}
}

func FuzzAppendStringHTML(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendStringHTML([]byte("pre"), s)
		if want, _ := json.Marshal(s); string(got) != "pre"+string(want) {
			t.Fatalf("AppendStringHTML(%q) = %s, want pre%s", s, got, want)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	buf := make([]byte, 0, 256)
	s := "Mock answer from claude-sonnet-4-5: the quick brown fox \"jumps\" over <the> lazy dog"
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendString(buf[:0], s)
	}
}
