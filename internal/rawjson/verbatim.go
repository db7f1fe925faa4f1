package rawjson

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Verbatim reports whether v is a JSON string (quotes included, nothing
// around them) that a decoder may send on as it is in place of its text
// decoded and encoded again: valid JSON whose bytes are valid UTF-8 and
// which escapes no lone UTF-16 surrogate (a pair, as Python's json writes
// an emoji, is one rune). Such a string says what its decoding says to any
// JSON reader (encoding/json replaces invalid UTF-8 and lone surrogates
// with U+FFFD; Verbatim refuses them). One pass over v.
func Verbatim(v []byte) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	for i := 1; i < len(v); {
		i += plainRun(v[i:])
		if i >= len(v) {
			return false
		}
		switch c := v[i]; {
		case c == '"':
			return i == len(v)-1
		case c == '\\':
			if i+1 >= len(v) {
				return false
			}
			if unescaped[v[i+1]] != 0 {
				i += 2
				continue
			}
			if v[i+1] != 'u' {
				return false
			}
			r := hex4(v[i+2:])
			if r < 0 {
				return false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				// Only a high half followed by a low one.
				if r >= 0xdc00 || len(v)-i < 6 || v[i] != '\\' || v[i+1] != 'u' ||
					utf16.DecodeRune(r, hex4(v[i+2:])) == utf8.RuneError {
					return false
				}
				i += 6
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(v[i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			i += size
		default: // a control character
			return false
		}
	}
	return false
}
