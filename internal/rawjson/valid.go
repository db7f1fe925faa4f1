package rawjson

// Valid reports whether b is one valid JSON value, exactly as json.Valid
// does (surrounding whitespace allowed; string contents are not checked for
// valid UTF-8; nesting deeper than 10000 is invalid), in one pass without
// encoding/json's per-byte state machine: several times faster on the
// response bodies the adapters check before scanning them.
func Valid(b []byte) bool {
	i, ok := validValue(b, skipSpace(b, 0), 0)
	return ok && skipSpace(b, i) == len(b)
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// validValue checks the value starting at b[i] (i past any whitespace) and
// returns the index after it. depth is the nesting of the enclosing value.
func validValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		return validString(b, i)
	case c == '{':
		return validObject(b, i, depth)
	case c == '[':
		return validArray(b, i, depth)
	case c == '-' || c >= '0' && c <= '9':
		return validNumber(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return 0, false
}

// validObject checks the object starting at b[i] == '{'.
func validObject(b []byte, i, depth int) (int, bool) {
	if depth >= maxDepth {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		var ok bool
		if i, ok = validString(b, i); !ok {
			return 0, false
		}
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		if i, ok = validValue(b, skipSpace(b, i+1), depth+1); !ok {
			return 0, false
		}
		var end bool
		if i, end, ok = next(b, i, '}'); !ok || end {
			return i, ok
		}
	}
}

// validArray checks the array starting at b[i] == '['.
func validArray(b []byte, i, depth int) (int, bool) {
	if depth >= maxDepth {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var end, ok bool
		if i, ok = validValue(b, i, depth+1); !ok {
			return 0, false
		}
		if i, end, ok = next(b, i, ']'); !ok || end {
			return i, ok
		}
	}
}

// next reads what follows a member or element at b[i]: a comma (it returns
// the index of the next one, past space) or the closing byte (end; it
// returns the index after it).
func next(b []byte, i int, closing byte) (_ int, end, ok bool) {
	i = skipSpace(b, i)
	switch {
	case i >= len(b):
		return 0, false, false
	case b[i] == ',':
		return skipSpace(b, i+1), false, true
	case b[i] == closing:
		return i + 1, true, true
	}
	return 0, false, false
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return 0, false
}

// validNumber checks the number starting at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return 0, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// Number reports whether v is exactly one JSON number literal (no
// surrounding space), the text strconv.ParseFloat and strconv.Atoi then
// read as encoding/json does.
func Number(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	end, ok := validNumber(v, 0)
	return ok && end == len(v)
}
