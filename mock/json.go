package mock

import (
	"strconv"
	"unicode/utf8"
)

// appendJSONString appends s as a quoted JSON string. It is the mock's only
// per-request encoder for dynamic text, so responses are built by appending
// bytes instead of reflecting over structs.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendJSONContent(b, s)
	return append(b, '"')
}

// appendJSONContent appends s JSON-escaped, without the quotes.
func appendJSONContent(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }
