package rawjson

import (
	"errors"
	"strconv"
)

// This file walks the fields of an object and the elements of an array and
// decodes the scalar values a decoder needs, skipping the rest.

// ErrMalformed is the error for input that is not the JSON shape expected.
var ErrMalformed = errors.New("malformed JSON")

// EachField calls fn with each key (unescaped; only valid during the call)
// and raw value of the JSON object obj, in order. A null obj has no fields.
func EachField(obj []byte, fn func(key, val []byte) error) error {
	return eachField(obj, fn, false)
}

// EachFieldValid is EachField that also checks, in the same pass, that obj
// is valid JSON as json.Valid defines it: a nil error means obj was valid
// (and an object or null). On an error fn may have seen some fields; a
// caller that must tell a syntax error from fn's errors checks Valid then.
func EachFieldValid(obj []byte, fn func(key, val []byte) error) error {
	return eachField(obj, fn, true)
}

func eachField(obj []byte, fn func(key, val []byte) error, valid bool) error {
	i := skipSpace(obj, 0)
	if valid && i == len(obj) {
		return ErrMalformed // no value at all: json.Valid rejects it
	}
	if IsNull(obj) {
		return nil
	}
	if i >= len(obj) || obj[i] != '{' {
		return ErrMalformed
	}
	end, err := walkObject(obj, i, fn, valid)
	if err != nil {
		return err
	}
	return trailing(obj, end)
}

// walkObject calls fn with each key and raw value of the object starting at
// b[i] == '{' and returns the index after it.
func walkObject(b []byte, i int, fn func(key, val []byte) error, valid bool) (int, error) {
	return walkMembers(b, i, func(key []byte, _, vstart, vend int) error { return fn(key, b[vstart:vend]) }, valid)
}

// walkMembers is walkObject that gives fn the offsets in b of each field:
// its key's opening quote and its value's bounds.
func walkMembers(b []byte, i int, fn func(key []byte, start, vstart, vend int) error, valid bool) (int, error) {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, ErrMalformed
		}
		start := i
		end, err := stringEnd(b, i, valid)
		if err != nil {
			return 0, err
		}
		key := b[i+1 : end-1]
		if plainRun(key) != len(key) {
			s, err := unquote(key)
			if err != nil {
				return 0, err
			}
			key = []byte(s)
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, ErrMalformed
		}
		i = skipSpace(b, i+1)
		vend, err := valueEnd(b, i, valid)
		if err != nil {
			return 0, err
		}
		if err := fn(key, start, i, vend); err != nil {
			return 0, err
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return 0, ErrMalformed
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, ErrMalformed
		}
	}
}

// stringEnd and valueEnd are skipString and skipValue, or with valid their
// checking forms.
func stringEnd(b []byte, i int, valid bool) (int, error) {
	if !valid {
		return skipString(b, i)
	}
	if end, ok := validString(b, i); ok {
		return end, nil
	}
	return 0, ErrMalformed
}

func valueEnd(b []byte, i int, valid bool) (int, error) {
	if !valid {
		return skipValue(b, i)
	}
	if end, ok := validValue(b, i, 1); ok {
		return end, nil
	}
	return 0, ErrMalformed
}

// EachObject walks the JSON array arr in one pass: for an element that is
// an object it calls field with each of its keys and raw values (as
// EachField does), then, for every element, done with its index and raw
// bytes; an element that is not an object goes to done alone, for the
// caller to judge. A null arr has no elements.
func EachObject(arr []byte, field func(key, val []byte) error, done func(i int, elem []byte) error) error {
	return eachObject(arr, field, done, false)
}

// EachObjectValid is EachObject that also checks, in the same pass, that
// each object element's keys and values are valid JSON (as Valid does); an
// invalid one is ErrMalformed. Elements that are not objects are skipped
// unchecked, for done to judge.
func EachObjectValid(arr []byte, field func(key, val []byte) error, done func(i int, elem []byte) error) error {
	return eachObject(arr, field, done, true)
}

func eachObject(arr []byte, field func(key, val []byte) error, done func(i int, elem []byte) error, valid bool) error {
	n := 0
	return eachElement(arr, func(arr []byte, i int) (int, error) {
		var end int
		var err error
		if arr[i] == '{' {
			end, err = walkObject(arr, i, field, valid)
		} else {
			end, err = skipValue(arr, i)
		}
		if err != nil {
			return 0, err
		}
		n++
		return end, done(n-1, arr[i:end])
	})
}

// EachElement calls fn with each raw element of the JSON array arr. A null
// arr has no elements.
func EachElement(arr []byte, fn func(elem []byte) error) error {
	return eachElement(arr, func(arr []byte, i int) (int, error) {
		end, err := skipValue(arr, i)
		if err != nil {
			return 0, err
		}
		return end, fn(arr[i:end])
	})
}

// eachElement calls elem with the index of each element of the JSON array
// arr; elem returns the index after it.
func eachElement(arr []byte, elem func(arr []byte, i int) (int, error)) error {
	i := skipSpace(arr, 0)
	if IsNull(arr) {
		return nil
	}
	if i >= len(arr) || arr[i] != '[' {
		return ErrMalformed
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return trailing(arr, i+1)
	}
	for {
		if i >= len(arr) {
			return ErrMalformed
		}
		end, err := elem(arr, i)
		if err != nil {
			return err
		}
		i = skipSpace(arr, end)
		if i >= len(arr) {
			return ErrMalformed
		}
		switch arr[i] {
		case ',':
			i = skipSpace(arr, i+1)
		case ']':
			return trailing(arr, i+1)
		default:
			return ErrMalformed
		}
	}
}

// String decodes a JSON string value; null is "" (as encoding/json leaves a
// string field).
func String(v []byte) (string, error) {
	if IsNull(v) {
		return "", nil
	}
	v = trimSpace(v)
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", ErrMalformed
	}
	return unquote(v[1 : len(v)-1])
}

// Int decodes a JSON integer value; null is 0.
func Int(v []byte) (int, error) {
	if IsNull(v) {
		return 0, nil
	}
	n, err := strconv.Atoi(string(trimSpace(v)))
	if err != nil {
		return 0, ErrMalformed
	}
	return n, nil
}

// IsNull reports whether v is empty or the literal null.
func IsNull(v []byte) bool {
	v = trimSpace(v)
	return len(v) == 0 || string(v) == "null"
}

func trailing(b []byte, i int) error {
	if skipSpace(b, i) != len(b) {
		return ErrMalformed
	}
	return nil
}

// scalarEnd reports whether c cannot be part of a number or literal.
func scalarEnd(c byte) bool {
	switch c {
	case ',', '}', ']', ':', '"', '{', '[', ' ', '\n', '\r', '\t':
		return true
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// skipValue returns the index after the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, ErrMalformed
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		if len(b)-i >= minBlocks {
			return skipBlocks(b, i)
		}
		return skipNested(b, i, 0)
	}
	j := i
	for j < len(b) && !scalarEnd(b[j]) {
		j++
	}
	if j == i {
		return 0, ErrMalformed
	}
	return j, nil
}

// skipNested returns the index after the object or array that is depth
// levels deep at b[j], outside its strings: where as many brackets have
// closed as were open at j or opened since (of either kind: the walk
// counts, it does not check), strings skipped.
func skipNested(b []byte, j, depth int) (int, error) {
	for ; j < len(b); j++ {
		switch b[j] {
		case '"':
			e, err := skipString(b, j)
			if err != nil {
				return 0, err
			}
			j = e - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, ErrMalformed
}
