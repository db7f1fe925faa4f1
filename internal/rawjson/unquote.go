package rawjson

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// This file decodes JSON strings in one pass, as encoding/json does
// (FuzzString): the long message strings of an agent's request carry
// escapes (a newline, a quote) on nearly every line, and decoding them
// through the library's reflection, with a copy per step, was most of a
// large request's cost.

// Word-at-a-time tests on eight bytes (little-endian; any order works):
// whether some byte is below 0x20, at or above 0x80, equal to c.
const (
	ones = 0x0101010101010101
	high = 0x8080808080808080
)

func hasLess(x uint64, n byte) bool { return (x-ones*uint64(n))&^x&high != 0 }

func hasByte(x uint64, c byte) bool { return zeroBytes(x^ones*uint64(c)) != 0 }

// plainRun is the length of the run at the start of s of bytes a string
// holds as they are: printable ASCII other than '"' and '\\'.
func plainRun(s []byte) int {
	i := 0
	for ; len(s)-i >= 8; i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		if x&high != 0 || hasLess(x, 0x20) || hasByte(x, '"') || hasByte(x, '\\') {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			break
		}
	}
	return i
}

// validRun is the length of the run at the start of s of bytes a valid
// string may hold unescaped: anything but a control character, '"' and
// '\\' (encoding/json does not check UTF-8 in Valid).
func validRun(s []byte) int {
	i := 0
	for ; len(s)-i >= 8; i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		if hasLess(x, 0x20) || hasByte(x, '"') || hasByte(x, '\\') {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			break
		}
	}
	return i
}

// unquote decodes the contents in of a JSON string (between its quotes) as
// encoding/json does: escapes resolved, a lone or broken surrogate and each
// byte of invalid UTF-8 replaced by U+FFFD. A control character, an
// unescaped quote or a bad escape is ErrMalformed.
func unquote(in []byte) (string, error) {
	n := plainRun(in)
	if n == len(in) {
		return string(in), nil
	}
	out := make([]byte, n, len(in))
	copy(out, in)
	for i := n; i < len(in); {
		c := in[i]
		if c == '\\' && i+1 < len(in) {
			if e := unescaped[in[i+1]]; e != 0 {
				out = append(out, e)
				i += 2
			} else {
				var err error
				if out, i, err = unescapeU(out, in, i); err != nil {
					return "", err
				}
			}
		} else if c >= 0x80 {
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, in[i:i+size]...)
			}
			i += size
		} else if c < 0x20 || c == '"' || c == '\\' {
			return "", ErrMalformed
		}
		run := plainRun(in[i:])
		out = append(out, in[i:i+run]...)
		i += run
	}
	return unsafe.String(unsafe.SliceData(out), len(out)), nil // out is not used again: no copy
}

// unescaped maps the byte after a backslash to what the escape stands for
// (0: not a one-byte escape).
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unescapeU appends the \uXXXX escape at in[i] and returns the index after it.
func unescapeU(out, in []byte, i int) ([]byte, int, error) {
	if in[i+1] != 'u' {
		return nil, 0, ErrMalformed
	}
	r := hex4(in[i+2:])
	if r < 0 {
		return nil, 0, ErrMalformed
	}
	i += 6
	if utf16.IsSurrogate(r) {
		// A pair is one rune; anything else is a replacement, and what
		// follows is read on its own (as encoding/json does).
		if len(in)-i >= 6 && in[i] == '\\' && in[i+1] == 'u' {
			if d := utf16.DecodeRune(r, hex4(in[i+2:])); d != utf8.RuneError {
				return utf8.AppendRune(out, d), i + 6, nil
			}
		}
		r = utf8.RuneError
	}
	return utf8.AppendRune(out, r), i, nil
}

// hex4 is the value of the four hex digits at the start of s, or -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// skipString returns the index after the string starting at b[i] == '"',
// looking only for its closing quote: the next '"' not escaped (an odd run
// of backslashes before it escapes it). A relayed body is skipped, not
// decoded, and its strings carry a backslash on nearly every line, so only
// quotes stop the scan.
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; ; j++ {
		if j = indexQuote(b, j); j < 0 {
			return 0, ErrMalformed
		}
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, nil
		}
	}
}

// indexQuote is the index of the first '"' in b at or after j, or -1:
// bytes.IndexByte (vectorised), after a look at the next 16 bytes a word
// at a time. Quotes come in pairs in code and prose (`\"ok\"`): the second
// of a pair is usually that near, where a call of IndexByte costs more
// than it scans (about 10% less time skipping an agent's conversation,
// measured interleaved with the IndexByte-only scan).
func indexQuote(b []byte, j int) int {
	if len(b)-j >= 16 {
		if m := zeroBytes(binary.LittleEndian.Uint64(b[j:]) ^ ones*'"'); m != 0 {
			return j + bits.TrailingZeros64(m)/8 // the lowest flag is exact
		}
		if m := zeroBytes(binary.LittleEndian.Uint64(b[j+8:]) ^ ones*'"'); m != 0 {
			return j + 8 + bits.TrailingZeros64(m)/8
		}
		j += 16
	}
	if k := bytes.IndexByte(b[j:], '"'); k >= 0 {
		return j + k
	}
	return -1
}

func zeroBytes(y uint64) uint64 { return (y - ones) &^ y & high }

// validString checks the string starting at b[i] == '"': no control
// characters, only JSON's escapes.
func validString(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		j += validRun(b[j:])
		if j >= len(b) {
			break
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			j++
			if j >= len(b) {
				return 0, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-j <= 4 || hex4(b[j+1:]) < 0 {
					return 0, false
				}
				j += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}
