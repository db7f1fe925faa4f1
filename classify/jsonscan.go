package classify

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds JSON nesting; deeper documents are rejected.
const maxDepth = 64

// scanner is a small single-pass JSON reader that decodes only the members
// the classifier asks for, without reflection. Strings without escapes are
// returned as substrings of the input, so a typical error body decodes
// without allocating. A malformed document sets bad and stops the scan.
//
// It is written here rather than taken from the JSON library because an
// error body is evidence, not input to reject: it tolerates raw control
// characters in strings and keeps invalid UTF-8 as sent, and what it cannot
// read goes to salvageJSON. On valid documents it reads what the library
// reads (FuzzScanner).
type scanner struct {
	s     string
	i     int
	depth int
	bad   bool
}

func (p *scanner) fail() {
	p.bad = true
	p.i = len(p.s)
}

func (p *scanner) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (p *scanner) peek() byte {
	p.ws()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// object calls fn for every member of the object at the cursor; fn must
// consume the member's value (with one of the readers, or skip). A value
// that is not an object is skipped.
func (p *scanner) object(fn func(key string)) {
	if !p.enter('{', '}') {
		return
	}
	for !p.bad {
		if p.peek() != '"' {
			p.fail()
			return
		}
		k := p.str()
		if p.peek() != ':' {
			p.fail()
			return
		}
		p.i++
		fn(k)
		if !p.next('}') {
			return
		}
	}
}

// array calls fn for every element of the array at the cursor; fn must
// consume the element. A value that is not an array is skipped.
func (p *scanner) array(fn func(i int)) {
	if !p.enter('[', ']') {
		return
	}
	for n := 0; !p.bad; n++ {
		fn(n)
		if !p.next(']') {
			return
		}
	}
}

// enter steps into the container that open starts at the cursor and
// reports whether it has members to read: a value that is not one is
// skipped, one nested deeper than maxDepth fails the scan, an empty one is
// consumed.
func (p *scanner) enter(open, close byte) bool {
	if p.peek() != open {
		p.skip()
		return false
	}
	if p.depth++; p.depth > maxDepth {
		p.fail()
		return false
	}
	p.i++
	if p.peek() == close {
		p.i++
		p.depth--
		return false
	}
	return true
}

// next consumes what follows a member and reports whether another comes:
// true after ',', false at close (the container is left) or at anything
// else (the scan fails).
func (p *scanner) next(close byte) bool {
	switch p.peek() {
	case ',':
		p.i++
		return true
	case close:
		p.i++
		p.depth--
		return false
	}
	p.fail()
	return false
}

// skip consumes any value.
func (p *scanner) skip() {
	switch c := p.peek(); c {
	case '{':
		p.object(func(string) { p.skip() })
	case '[':
		p.array(func(int) { p.skip() })
	case '"':
		p.str()
	case 0:
		p.fail()
	default:
		p.literal()
	}
}

// literal consumes a number, true, false or null and returns its text.
func (p *scanner) literal() string {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '+' || c == '.' || c == 'E' {
			p.i++
			continue
		}
		break
	}
	lit := p.s[start:p.i]
	switch {
	case lit == "":
		p.fail()
	case lit == "true", lit == "false", lit == "null":
	case lit[0] == '-' || lit[0] >= '0' && lit[0] <= '9':
	default:
		p.fail()
	}
	return lit
}

// str consumes a string and returns its decoded contents. Raw control
// characters are tolerated (a classifier should not reject a body over them).
func (p *scanner) str() string {
	if p.peek() != '"' {
		p.fail()
		return ""
	}
	p.i++
	start := p.i
	j := strings.IndexByte(p.s[start:], '"')
	if j < 0 {
		p.fail()
		return ""
	}
	if strings.IndexByte(p.s[start:start+j], '\\') >= 0 {
		return p.strSlow(start)
	}
	p.i = start + j + 1
	return p.s[start : start+j]
}

// strSlow decodes a string with escapes, starting at start (just after the quote).
func (p *scanner) strSlow(start int) string {
	var b strings.Builder
	b.Grow(64)
	p.i = start
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String()
		case c != '\\':
			b.WriteByte(c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			p.fail()
			return ""
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return ""
			}
			if utf16.IsSurrogate(r) {
				r = p.lowSurrogate(r)
			}
			b.WriteRune(r)
		default:
			p.fail()
			return ""
		}
	}
	p.fail()
	return ""
}

// lowSurrogate completes the surrogate r with the \u escape at the cursor
// when the two make a pair; otherwise r is U+FFFD and the cursor stays (the
// next escape is a character of its own), as encoding/json decodes it.
func (p *scanner) lowSurrogate(r rune) rune {
	if p.i+6 > len(p.s) || p.s[p.i] != '\\' || p.s[p.i+1] != 'u' {
		return utf8.RuneError
	}
	q := scanner{s: p.s[:p.i+6], i: p.i + 2}
	r2, ok := q.hex4()
	if !ok {
		return utf8.RuneError
	}
	if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
		p.i += 6
		return dec
	}
	return utf8.RuneError
}

func (p *scanner) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		p.fail()
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.s[p.i : p.i+4]) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			p.fail()
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

// text reads a string, number or boolean as text; null, objects and
// arrays read as "" (and are consumed).
func (p *scanner) text() string {
	switch c := p.peek(); {
	case c == '"':
		return p.str()
	case c == '{' || c == '[':
		p.skip()
		return ""
	case c == 0:
		p.fail()
		return ""
	}
	lit := p.literal()
	if lit == "null" {
		return ""
	}
	return lit
}

// raw reads a string's contents, or the raw JSON text of any other value
// (OpenRouter's metadata.raw is either a string or an object).
func (p *scanner) raw() string {
	if p.peek() == '"' {
		return p.str()
	}
	start := p.i
	p.skip()
	if p.bad {
		return ""
	}
	v := p.s[start:p.i]
	if v == "null" {
		return ""
	}
	return v
}

// salvageJSON pulls the obvious fields out of a truncated or malformed
// JSON body with plain string scanning.
func salvageJSON(t []byte, rep *bodyReport) {
	s := string(t)
	for _, k := range [...]string{"error_code", "reason", "code", "type", "status"} {
		rest := s
		for n := 0; n < 4; n++ {
			v, next := scanStringFieldFrom(rest, k)
			if next < 0 {
				break
			}
			rest = rest[next:]
			if v != "" && v != "error" {
				rep.addID(v)
				if rep.ptype == "" {
					rep.ptype = v
				}
			}
		}
	}
	rep.message = scanStringField(s, "message")
	if rep.message == "" {
		rep.message = s
	}
	rep.reqID = scanStringField(s, "request_id")
	rep.isError = len(rep.ids) > 0 || rep.message != ""
}

// scanStringField finds `"key": "value"` in s and returns value (possibly
// cut short when s is truncated).
func scanStringField(s, key string) string {
	v, _ := scanStringFieldFrom(s, key)
	return v
}

// scanStringFieldFrom is scanStringField that also returns the offset just
// past the key it matched, or -1 when the key does not occur.
func scanStringFieldFrom(s, key string) (string, int) {
	pat := `"` + key + `"`
	i := strings.Index(s, pat)
	if i < 0 {
		return "", -1
	}
	next := i + len(pat)
	s = strings.TrimLeft(s[next:], " \t\r\n")
	if !strings.HasPrefix(s, ":") {
		return "", next
	}
	s = strings.TrimLeft(s[1:], " \t\r\n")
	if !strings.HasPrefix(s, `"`) {
		return "", next
	}
	s = s[1:]
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			break
		}
		if c == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n', 'r', 't':
				b.WriteByte(' ')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String(), next
}
