package rawjson

import (
	"slices"

	"github.com/segmentio/encoding/json"
)

// SpliceMode says when Splice applies a Field.
type SpliceMode uint8

// Splice modes.
const (
	// Set replaces the key's value where it is, or appends the key.
	Set SpliceMode = iota
	// Default appends the key only when the object lacks it.
	Default
	// Replace replaces the key's value only when the object has it.
	Replace
	// Delete removes the key (Value is ignored).
	Delete
)

// Field is a top-level field for Splice: Value is JSON text.
type Field struct {
	Key   string
	Value []byte
	Mode  SpliceMode
}

// Splice appends to dst the JSON object obj with fields applied: a key
// present in obj keeps its place (its value replaced, or the field removed),
// a key absent is appended after the others in the order of fields. Every
// other field is copied with its value byte for byte; whitespace between
// top-level fields is not kept. A key listed twice in fields applies its
// first entry. obj must be a JSON object.
func Splice(dst, obj []byte, fields []Field) ([]byte, error) {
	var seen uint64 // fields found in obj (the first 64)
	n := 0
	need := len(obj) + 2
	for i := range fields {
		need += len(fields[i].Key) + len(fields[i].Value) + 4 // "key":value,
	}
	dst = slices.Grow(dst, need) // one allocation, however many fields are added
	dst = append(dst, '{')
	err := EachField(obj, func(k, v []byte) error {
		out := v
		if i := find(fields, k); i >= 0 {
			if i < 64 {
				seen |= 1 << i
			}
			switch fields[i].Mode {
			case Delete:
				return nil
			case Set, Replace:
				out = fields[i].Value
			}
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = json.AppendEscape(dst, string(k), 0)
		dst = append(dst, ':')
		dst = append(dst, out...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if IsNull(obj) {
		return nil, ErrMalformed
	}
	for i := range fields {
		f := &fields[i]
		if i < 64 && seen&(1<<i) != 0 || f.Mode == Replace || f.Mode == Delete || dup(fields[:i], f.Key) {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = json.AppendEscape(dst, f.Key, 0)
		dst = append(dst, ':')
		dst = append(dst, f.Value...)
	}
	return append(dst, '}'), nil
}

func dup(fields []Field, key string) bool { return find(fields, []byte(key)) >= 0 }

// find is the index of the first field whose key is k, or -1.
func find(fields []Field, k []byte) int {
	for i := range fields {
		if fields[i].Key == string(k) {
			return i
		}
	}
	return -1
}
