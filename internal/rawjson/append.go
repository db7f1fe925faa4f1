// Package rawjson reads and writes JSON without reflection, for the hot
// paths: the gateway's and the provider adapters' decoders walk objects and
// arrays with EachField and EachElement, and the gateway's and the mock's
// encoders append strings with AppendString. EachField checks structure
// only; callers that must reject malformed input walk with EachFieldValid,
// or check with Valid (json.Valid's grammar, faster); Number recognises a
// plain number literal.
package rawjson

import "unicode/utf8"

// AppendString appends s as a quoted JSON string literal, exactly as an
// encoding/json Encoder with SetEscapeHTML(false) would encode it.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = AppendContent(b, s)
	return append(b, '"')
}

// AppendContent appends s JSON-escaped, without the quotes, byte for byte as
// an encoding/json Encoder with SetEscapeHTML(false) escapes it: <, > and &
// stay readable, invalid UTF-8 becomes U+FFFD, and U+2028 and U+2029 are
// escaped so the output is safe in SSE and JavaScript.
func AppendContent(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
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
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
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
