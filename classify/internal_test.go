package classify

import (
	"strings"
	"testing"
)

func TestTruncateEdges(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 0, "a…"},
		{"a", 0, "a"},
		{"héllo", 2, "h…"}, // never cuts inside a rune
		{"ab cd", 3, "ab…"},
	}
	for _, tt := range tests {
		if got := truncate(tt.s, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
		var b strings.Builder
		writeTruncated(&b, tt.s, tt.n)
		if b.String() != tt.want {
			t.Errorf("writeTruncated(%q, %d) = %q, want %q", tt.s, tt.n, b.String(), tt.want)
		}
	}
}

func TestScannerRejectsDeepNesting(t *testing.T) {
	p := scanner{s: strings.Repeat("[", 100) + strings.Repeat("]", 100)}
	p.skip()
	if !p.bad {
		t.Errorf("nesting of 100 accepted; the limit is %d", maxDepth)
	}
	p = scanner{s: `{"a":"\u00e9\ud83d\ude00\n","b":[1,true,null,{"c":-1.5e3}]}`}
	var a string
	p.object(func(k string) {
		if k == "a" {
			a = p.str()
		} else {
			p.skip()
		}
	})
	if p.bad || a != "é😀\n" {
		t.Errorf("decoded %q, bad %v", a, p.bad)
	}
}
