package rawjson

import (
	"bytes"
	"strconv"
)

// Cursor reads one JSON document in a single pass, front to back, checking
// as it goes that the document is valid JSON as Valid defines it: a stream
// decoder descends into the objects it reads and skips the rest, each byte
// visited once (a check of the whole, then a walk of each level read,
// visits the innermost bytes once a level). A stream's events are small and
// many, and decoding each through the library's reflection was most of what
// relaying a stream cost. It reads the fields of an object named by a key list
// as json.Unmarshal into a struct would, and gives up (Failed) where the
// library would do something of its own (a key twice, a key in another
// case), for the caller to leave the document to Unmarshal; each caller's
// differential fuzz test checks that both read the same (FuzzCursor checks
// the grammar against json.Valid).
//
// A caller reads exactly one value after each Field or Next that says
// there is one: with Object, Array, Text, Int, Null, Raw or Skip (after
// NextObject, the object's fields). Once failed,
// every read returns its zero value. The zero Cursor reads an empty
// document (which fails); Reset starts another. Not safe for concurrent use.
type Cursor struct {
	b     []byte
	i     int
	depth int  // containers open around the cursor
	first bool // just inside '{' or '[': no comma before the next member
	bad   bool
	// seen holds, for each container open, the keys Field read in it (one
	// bit each).
	seen []uint32
}

// Reset starts reading b.
func (c *Cursor) Reset(b []byte) { *c = Cursor{b: b, seen: c.seen[:0]} }

// Failed reports whether the document is not valid JSON, or not one the
// reads so far could read as Unmarshal would.
func (c *Cursor) Failed() bool { return c.bad }

// Done reports whether the document was read whole (only space follows the
// value read) without failing.
func (c *Cursor) Done() bool { return !c.bad && skipSpace(c.b, c.i) == len(c.b) }

// Fail gives the document up: a caller that meets a shape it leaves to
// Unmarshal says so, and the reads that follow return their zero values.
func (c *Cursor) Fail() {
	c.bad, c.i = true, len(c.b)
}

// peek skips space and returns the next byte (0 at the end or once failed).
func (c *Cursor) peek() byte {
	c.i = skipSpace(c.b, c.i)
	if c.bad || c.i >= len(c.b) {
		return 0
	}
	return c.b[c.i]
}

// Null reads a null if one is next and reports whether it did.
func (c *Cursor) Null() bool {
	if c.peek() != 'n' {
		return false
	}
	if i, ok := literal(c.b, c.i, "null"); ok {
		c.i = i
		return true
	}
	c.Fail()
	return false
}

// open reads the opening byte of a container.
func (c *Cursor) open(b byte) bool {
	switch c.peek() {
	case b:
		if c.depth >= maxDepth {
			c.Fail()
			return false
		}
		c.i++
		if c.depth++; c.depth > len(c.seen) {
			c.seen = append(c.seen, 0)
		}
		c.seen[c.depth-1] = 0
		c.first = true
		return true
	case 'n':
		c.Null()
	default:
		c.Fail()
	}
	return false
}

// Object reads the start of an object, whose fields Field then reads. It
// is false for null (read: an object with no fields) and, failing, for
// anything else.
func (c *Cursor) Object() bool { return c.open('{') }

// Array reads the start of an array, whose elements Next then counts off.
// It is false for null (read) and, failing, for anything else.
func (c *Cursor) Array() bool { return c.open('[') }

// more reads what comes before the next member or element of the
// container being read: true when one follows, false at its closing byte
// (read) or on failure.
func (c *Cursor) more(closing byte) bool {
	ch := c.peek()
	switch {
	case ch == closing:
		c.i++
		c.depth--
		c.first = false
		return false
	case c.first:
		c.first = false
		return ch != 0 || c.failed()
	case ch == ',':
		c.i++
		return true
	}
	c.Fail()
	return false
}

// failed is Fail, returning false.
func (c *Cursor) failed() bool {
	c.Fail()
	return false
}

// Next reports whether another element of the array being read follows,
// for the caller to read; false at the array's end (read) or on failure.
func (c *Cursor) Next() bool { return c.more(']') }

// NextObject is Next for an array of objects: it reads the start of the
// element that follows, whose fields Field then reads, and fails on an
// element that is not an object (null included).
func (c *Cursor) NextObject() bool {
	if !c.Next() {
		return false
	}
	if c.peek() != '{' {
		return c.failed()
	}
	return c.Object()
}

// Field reads keys of the object being read up to the next one in keys
// (at most 32), skipping the values of the others as Unmarshal into a
// struct with those fields would, and returns its index in keys, for the
// caller to read its value; -1 at the object's end (read) or on failure.
// keys are lowercase ASCII, as the JSON names of a struct's fields mostly
// are. It fails on a key in keys seen twice, and on a key that would match
// one of keys only as the library matches names (by case, by Unicode
// folding).
func (c *Cursor) Field(keys []string) int {
	for c.more('}') {
		key, ok := c.key()
		if !ok {
			c.Fail()
			return -1
		}
		k, err := keyIndex(keys, key)
		switch {
		case err != nil || k >= 0 && c.seen[c.depth-1]&(1<<k) != 0:
			c.Fail()
			return -1
		case k >= 0:
			c.seen[c.depth-1] |= 1 << k
			return k
		}
		c.Skip()
	}
	return -1
}

// key reads a member's key (unescaped) and the colon after it.
func (c *Cursor) key() ([]byte, bool) {
	if c.peek() != '"' {
		return nil, false
	}
	plain, s, ok := c.str()
	switch {
	case !ok || c.peek() != ':':
		return nil, false
	case plain == nil:
		plain = []byte(s)
	}
	c.i++
	return plain, true
}

// str reads the string at the cursor: its contents as they are when they
// have no escapes, no control characters and no byte above ASCII, else
// unescaped in s.
func (c *Cursor) str() (plain []byte, s string, ok bool) {
	start := c.i + 1
	if j := start + plainRun(c.b[start:]); j < len(c.b) && c.b[j] == '"' {
		c.i = j + 1
		return c.b[start:j], "", true
	}
	end, ok := validString(c.b, c.i)
	if !ok {
		return nil, "", false
	}
	s, err := unquote(c.b[start : end-1])
	c.i = end
	return nil, s, err == nil
}

// keyIndex is the index in keys (lowercase ASCII names) of the key k, -1
// for a key that none of keys is (Unmarshal skips its value), or
// errUnusual for a key that Unmarshal would match to one of keys by
// folding it.
func keyIndex(keys []string, k []byte) (int, error) {
	for i, name := range keys {
		if string(k) == name {
			return i, nil
		}
	}
	upper := false
	for _, c := range k {
		if c >= 0x80 && len(keys) > 0 {
			return -1, errUnusual // Unicode folding could match it to a key
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	if upper { // no other key folds to a lowercase name
		for _, name := range keys {
			if len(name) == len(k) && bytes.EqualFold(k, []byte(name)) {
				return -1, errUnusual
			}
		}
	}
	return -1, nil
}

// Skip reads a value of any kind, checking it.
func (c *Cursor) Skip() {
	c.Raw()
}

// Raw reads a value of any kind, checking it, and returns its bytes.
func (c *Cursor) Raw() []byte {
	if c.peek() == 0 {
		c.Fail()
		return nil
	}
	start := c.i
	end, ok := validValue(c.b, c.i, c.depth)
	if !ok {
		c.Fail()
		return nil
	}
	c.i = end
	return c.b[start:end]
}

// Text reads a string or null (""), as String decodes it, and returns
// last itself, allocating nothing, when the string spells it as it is
// (ASCII, no escapes). Anything else fails.
func (c *Cursor) Text(last string) string {
	switch c.peek() {
	case '"':
	case 'n':
		c.Null()
		return ""
	default:
		c.Fail()
		return ""
	}
	plain, s, ok := c.str()
	switch {
	case !ok:
		c.Fail()
		return ""
	case plain == nil:
		return s
	case string(plain) == last:
		return last
	}
	return string(plain)
}

// Int reads an integer that fits an int, or null (0). Anything else (a
// number with a fraction or an exponent too) fails.
func (c *Cursor) Int() int {
	switch ch := c.peek(); {
	case ch == 'n':
		c.Null()
		return 0
	case ch != '-' && (ch < '0' || ch > '9'):
		c.Fail()
		return 0
	}
	end, ok := validNumber(c.b, c.i)
	if !ok {
		c.Fail()
		return 0
	}
	n, err := strconv.Atoi(string(c.b[c.i:end]))
	c.i = end
	if err != nil {
		c.Fail()
	}
	return n
}

// Offset is where the cursor is in the document: just after the value read
// last, or before the space ahead of the next one.
func (c *Cursor) Offset() int { return c.i }

// Around is a document read whole once, remembered around one string in it:
// a document that is the same but for that string reads the same, the
// string aside, with no walk of its own. A stream's events mostly differ
// from the one before only in the text they carry. The zero Around
// remembers nothing; it is not safe for concurrent use.
type Around struct {
	pre, post []byte // the document before the string's opening quote, after its closing one
	kept      bool
}

// Keep remembers doc, read whole and valid, around the string value a
// Cursor read between offsets from and to (space before it allowed); it
// forgets what it kept when that value is not a string.
func (a *Around) Keep(doc []byte, from, to int) {
	from = skipSpace(doc, from)
	a.kept = from < to && doc[from] == '"' && doc[to-1] == '"' && to-from >= 2
	if a.kept {
		a.pre = append(a.pre[:0], doc[:from]...)
		a.post = append(a.post[:0], doc[to:]...)
	}
}

// Forget forgets what Keep kept.
func (a *Around) Forget() { a.kept = false }

// Match reports whether doc is the document kept with one string, whole and
// valid, in place of the one it had (doc is then valid and reads as the
// kept one did but for that string), and returns the string, decoded.
func (a *Around) Match(doc []byte) (string, bool) {
	n := len(doc) - len(a.post)
	if !a.kept || n-len(a.pre) < 2 || string(doc[:len(a.pre)]) != string(a.pre) || string(doc[n:]) != string(a.post) {
		return "", false
	}
	mid := doc[len(a.pre):n]
	if mid[0] != '"' {
		return "", false
	}
	if end, ok := validString(mid, 0); !ok || end != len(mid) {
		return "", false
	}
	s, err := unquote(mid[1 : len(mid)-1])
	return s, err == nil
}

// NextKey reads the next key of the object being read (unescaped; a slice
// of the document when it has no escapes) and the colon after it, for the
// caller to read its value: a decoder that judges each key itself (one
// that gives up on a key it does not know, where Field would skip it)
// reads with NextKey. False at the object's end (read) or on failure.
func (c *Cursor) NextKey() ([]byte, bool) {
	if !c.more('}') {
		return nil, false
	}
	key, ok := c.key()
	if !ok {
		c.Fail()
		return nil, false
	}
	return key, true
}

// Verbatim reads a string that Verbatim accepts and returns it, quotes
// included, a slice of the document, checked in the one pass that finds
// its end. For any other value it reads nothing and returns nil, for the
// caller to read the value another way.
func (c *Cursor) Verbatim() []byte {
	if c.peek() != '"' {
		return nil
	}
	end, ok := verbatimEnd(c.b, c.i)
	if !ok {
		return nil
	}
	v := c.b[c.i:end]
	c.i = end
	return v
}
