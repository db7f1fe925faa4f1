package classify

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/segmentio/encoding/json"
)

// tree reads the value at the cursor with the scanner into the shape
// json.Unmarshal gives with UseNumber (numbers as json.Number).
func (p *scanner) tree() any {
	switch p.peek() {
	case '{':
		m := map[string]any{}
		p.object(func(k string) { m[k] = p.tree() })
		return m
	case '[':
		a := []any{}
		p.array(func(int) { a = append(a, p.tree()) })
		return a
	case '"':
		return p.str()
	}
	switch lit := p.literal(); lit {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	default:
		return json.Number(lit)
	}
}

// FuzzScanner checks the classifier's tolerant scanner against the JSON
// library: every valid document (no deeper than maxDepth, valid UTF-8) is
// accepted and reads to the same values, escapes and surrogates included.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		`{"a":"\u00e9\ud83d\ude00\n","b":[1,true,null,{"c":-1.5e3}]}`,
		`{"error":{"code":429,"details":[{"@type":"x","retryDelay":"1s"}]}}`,
		`["\ud800\u0041","\udc00","\ud83d\ud83d\ude00", "\"\\\/\b\f\r\t"]`,
		`{"a":1,"a":{"b":2}}`,
		` [ ] `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) || !utf8.Valid(b) || depth(b) > maxDepth {
			return
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var want any
		if err := d.Decode(&want); err != nil {
			t.Fatalf("library rejects what it calls valid: %v", err)
		}
		p := scanner{s: string(b)}
		got := p.tree()
		if p.bad {
			t.Fatalf("scanner rejects valid %q", b)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("scanner read %q as\n%#v\nlibrary:\n%#v", b, got, want)
		}
	})
}

// depth is the nesting depth of a valid JSON document.
func depth(b []byte) int {
	n, deepest, in := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && strings.IndexByte("[{", c) >= 0:
			n++
			deepest = max(deepest, n)
		case !in && strings.IndexByte("]}", c) >= 0:
			n--
		}
	}
	return deepest
}
