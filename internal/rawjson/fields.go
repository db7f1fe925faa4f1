package rawjson

import (
	"bytes"
	"errors"
)

// This file reads the known fields of small objects as json.Unmarshal into
// a struct would, for the stream decoders: a stream's events are many and
// small, and decoding each through the library's reflection was most of
// what relaying a stream cost. A read that meets what the library would
// treat in a way of its own (a key twice, a key in another case) says so,
// and the caller leaves that event to Unmarshal; each caller's
// differential fuzz test checks that both read the same.

// errUnusual ends a walk that leaves its input to Unmarshal.
var errUnusual = errors.New("rawjson: unusual object")

// known reads the fields of one object named by keys (at most 32).
type known struct {
	keys []string
	read func(key string, val []byte) bool
	seen uint32
}

func (r *known) field(k, v []byte) error {
	for i, name := range r.keys {
		if string(k) == name {
			if r.seen&(1<<i) != 0 || !r.read(name, v) {
				return errUnusual
			}
			r.seen |= 1 << i
			return nil
		}
	}
	for _, c := range k {
		if c >= 0x80 {
			return errUnusual // Unicode folding could match it to a key
		}
	}
	for _, name := range r.keys {
		if len(name) == len(k) && bytes.EqualFold(k, []byte(name)) {
			return errUnusual
		}
	}
	return nil // a field the struct does not have: skipped, as Unmarshal does
}

// ReadFields walks the JSON object obj (null has no fields) as
// json.Unmarshal into a struct with fields named keys (at most 32) would,
// calling read with each of those keys present (the string from keys: no
// allocation) and its raw value. It returns false, for the caller to leave
// obj to Unmarshal, when obj is not an object or null, when read returns
// false, when one of keys comes twice, or when a key would match one of
// keys only as the library matches names (regardless of case, by Unicode
// folding); with valid, also when obj is not valid JSON, checked in the
// same pass (without, the caller checked it).
func ReadFields(obj []byte, valid bool, keys []string, read func(key string, val []byte) bool) bool {
	r := known{keys: keys, read: read}
	if valid {
		return EachFieldValid(obj, r.field) == nil
	}
	return EachField(obj, r.field) == nil
}

// ReadObjects walks the JSON array arr (null has no elements), whose
// elements must be objects, reading each as ReadFields does without valid,
// then calling done. It returns false when ReadFields would for an
// element, when an element is not an object, or when done returns false.
func ReadObjects(arr []byte, keys []string, read func(key string, val []byte) bool, done func() bool) bool {
	r := known{keys: keys, read: read}
	return EachObject(arr, r.field, func(_ int, elem []byte) error {
		if elem[0] != '{' || !done() {
			return errUnusual
		}
		r.seen = 0
		return nil
	}) == nil
}

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
