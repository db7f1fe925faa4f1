package rawjson

import (
	"bytes"
	"errors"
)

// errUnusual ends a read that leaves its input to Unmarshal (see Cursor):
// what the library would treat in a way of its own (a key twice, a key in
// another case).
var errUnusual = errors.New("rawjson: unusual object")

// Text decodes the JSON string or null ("") v, as String does, and returns
// last itself, allocating nothing, when v spells it without escapes. It is
// false when v is neither.
func Text(v []byte, last string) (string, bool) {
	v = trimSpace(v)
	switch {
	case len(v) == 0:
		return "", false
	case v[0] == 'n':
		return "", string(v) == "null"
	case v[0] != '"' || len(v) < 2:
		return "", false
	}
	if in := v[1 : len(v)-1]; string(in) == last && bytes.IndexByte(in, '\\') < 0 {
		return last, true
	}
	s, err := String(v)
	return s, err == nil
}
