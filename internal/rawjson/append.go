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

// AppendStringHTML appends s as a quoted JSON string literal exactly as
// json.Marshal encodes it: AppendString's escaping plus <, > and & as
// \u003c, \u003e and \u0026.
func AppendStringHTML(b []byte, s string) []byte {
	start := len(b)
	b = AppendString(b, s)
	// AppendString writes <, > and & only as themselves, never inside an
	// escape, so each one left in the literal is one to escape.
	n := 0
	for _, c := range b[start:] {
		if c == '<' || c == '>' || c == '&' {
			n++
		}
	}
	if n == 0 {
		return b
	}
	end := len(b)
	b = append(b, make([]byte, 5*n)...) // each grows by 5 bytes
	w := len(b)
	for r := end - 1; r >= start; r-- { // back to front, in place
		c := b[r]
		if c != '<' && c != '>' && c != '&' {
			w--
			b[w] = c
			continue
		}
		w -= 6
		copy(b[w:], `\u00`)
		b[w+4], b[w+5] = "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf]
	}
	return b
}
