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
	end, ok := verbatimEnd(v, 0)
	return ok && end == len(v)
}

// verbatimEnd is the index after the string starting at b[i], if it is one
// that Verbatim accepts. It steps four bytes at a time through a table of
// the bytes a string holds as they are: the texts of an agent's
// conversation (code, files read) escape a byte every eight or so, where
// the word-at-a-time run of plainRun, stopped at each, cost about a third
// more (and a tenth more on prose).
func verbatimEnd(b []byte, i int) (int, bool) {
	if len(b)-i < 2 || b[i] != '"' {
		return 0, false
	}
	for i++; i < len(b); {
		for len(b)-i >= 4 {
			w := b[i : i+4 : i+4]
			if special[w[0]]|special[w[1]]|special[w[2]]|special[w[3]] != 0 {
				break
			}
			i += 4
		}
		for i < len(b) && special[b[i]] == 0 {
			i++
		}
		if i >= len(b) {
			return 0, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(b) {
				return 0, false
			}
			if unescaped[b[i+1]] != 0 {
				i += 2
				continue
			}
			if b[i+1] != 'u' {
				return 0, false
			}
			r := hex4(b[i+2:])
			if r < 0 {
				return 0, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				// Only a high half followed by a low one.
				if r >= 0xdc00 || len(b)-i < 6 || b[i] != '\\' || b[i+1] != 'u' ||
					utf16.DecodeRune(r, hex4(b[i+2:])) == utf8.RuneError {
					return 0, false
				}
				i += 6
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, false
			}
			i += size
		default: // a control character
			return 0, false
		}
	}
	return 0, false
}

// special is 1 for the bytes a JSON string does not hold as they are: a
// control character, '"', '\\' and the bytes of multi-byte runes.
var special = func() (t [256]byte) {
	for c := range t {
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			t[c] = 1
		}
	}
	return t
}()
