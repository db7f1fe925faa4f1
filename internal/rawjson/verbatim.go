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
// that Verbatim accepts: 64 bytes a step where the CPU has the vector
// instructions for it (scanVerbatim, which judges the runes it passes as
// well; utf8.Valid the string where it found an error), the byte walk
// (verbatimRun) judging the first bytes, a block with a control character
// or a \u escape, and the last bytes, each from the start of a rune that
// the blocks cut (runeStart).
func verbatimEnd(b []byte, i int) (int, bool) {
	if len(b)-i < 2 || b[i] != '"' {
		return 0, false
	}
	i++
	if !haveBlocks {
		end, ok, _ := verbatimRun(b, i, len(b))
		return end, ok
	}
	// A short string ends before a block would have paid.
	start := i
	end, ok, done := verbatimRun(b, i, i+32)
	var bad uint64 // the scan found runes it cannot vouch for
	// The byte walk takes a block that stopped the scan, and the more
	// blocks after it the fewer the scan walked before it.
	for run := 64; !done && len(b)-end >= 64; {
		i = end
		var st verbatimState
		n := scanVerbatim(&b[i], len(b)-i, &st)
		bad |= st.bad
		if st.status == verbatimDone {
			end, ok, done = i+n, true, true
			break
		}
		if n >= 64 {
			run = 64
		} else if run < 4096 {
			run *= 2
		}
		i += n - int(st.escaped) // from the backslash that escapes the block's first byte
		i = runeStart(b, start, i)
		if st.status == verbatimOut {
			end = i
			break
		}
		end, ok, done = verbatimRun(b, i, i+run)
	}
	if !done {
		end, ok, _ = verbatimRun(b, end, len(b))
	}
	if ok && bad != 0 && !utf8.Valid(b[start:end-1]) {
		return 0, false
	}
	return end, ok
}

// runeStart is where the byte walk takes on from the blocks at i: the
// start of a multi-byte rune that begins before i (not before from) and
// does not end before it, else i. The blocks judge no rune they cut at
// their end (UTF8 in utf8_amd64.h), whether it goes on past i or stops
// short there: the byte walk reads it whole. A continuation byte with no
// lead before it is the byte walk's to refuse, from i.
func runeStart(b []byte, from, i int) int {
	for j := i - 1; j >= from && j >= i-(utf8.UTFMax-1); j-- {
		c := b[j]
		if c < utf8.RuneSelf {
			return i // ASCII: no rune is cut at i
		}
		if utf8.RuneStart(c) { // the lead of the rune j..
			if j+leadLen(c) > i {
				return j
			}
			return i
		}
	}
	return i
}

// leadLen is the length of the rune whose first byte is c (at least 0xc0).
func leadLen(c byte) int {
	switch {
	case c >= 0xf0:
		return 4
	case c >= 0xe0:
		return 3
	}
	return 2
}

// verbatimState is where scanVerbatim stopped.
type verbatimState struct {
	escaped uint64 // 1 when the next block's first byte is escaped
	status  int64  // verbatimOut, verbatimDone or verbatimSlow
	// bad is 1 when the blocks walked had bytes that are not valid UTF-8
	// (or that the scan could not judge: the bytes after the string's end
	// in its last block); a rune cut short by the last block is no error.
	bad uint64
}

const (
	verbatimOut  = iota // fewer than 64 bytes are left
	verbatimDone        // the string ended: scanVerbatim returned the index after it
	verbatimSlow        // the block has what the byte walk must judge
)

// verbatimRun walks the string's contents from b[i], not inside an escape,
// to its end (done, and ok when it is verbatim), or to the first byte from
// stop on that is not inside an escape (its index, not done). It steps
// four bytes at a time through a table of the bytes a string holds as
// they are: the texts of an agent's conversation (code, files read)
// escape a byte every eight or so, where the word-at-a-time run of
// plainRun, stopped at each, cost about a third more (and a tenth more on
// prose).
func verbatimRun(b []byte, i, stop int) (end int, ok, done bool) {
	for i < len(b) {
		if i >= stop {
			return i, false, false
		}
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
			return 0, false, true
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true, true
		case c == '\\':
			if i+1 >= len(b) {
				return 0, false, true
			}
			if unescaped[b[i+1]] != 0 {
				i += 2
				continue
			}
			if b[i+1] != 'u' {
				return 0, false, true
			}
			r := hex4(b[i+2:])
			if r < 0 {
				return 0, false, true
			}
			i += 6
			if utf16.IsSurrogate(r) {
				// Only a high half followed by a low one.
				if r >= 0xdc00 || len(b)-i < 6 || b[i] != '\\' || b[i+1] != 'u' ||
					utf16.DecodeRune(r, hex4(b[i+2:])) == utf8.RuneError {
					return 0, false, true
				}
				i += 6
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, false, true
			}
			i += size
		default: // a control character
			return 0, false, true
		}
	}
	return 0, false, true
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
