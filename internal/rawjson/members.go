package rawjson

import (
	"github.com/segmentio/encoding/json"
)

// Member is one top-level field of a JSON object: its key (unescaped) and
// where its text lies in the object, Start at the key's opening quote,
// Value at the value's first byte, End just past the value.
type Member struct {
	Key               string
	Start, Value, End int
}

// Members lists the top-level fields of the JSON object obj in order, in
// one walk that skips their values without checking them, as EachField
// does; fn, when not nil, also gets each field's key and raw value during
// the walk (an error stops it). A null obj is ErrMalformed.
func Members(obj []byte, fn func(key, val []byte) error) ([]Member, error) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, ErrMalformed
	}
	var ms []Member
	end, err := walkMembers(obj, i, func(key []byte, start, vstart, vend int) error {
		if fn != nil {
			if err := fn(key, obj[vstart:vend]); err != nil {
				return err
			}
		}
		ms = append(ms, Member{Key: string(key), Start: start, Value: vstart, End: vend})
		return nil
	}, false)
	if err != nil {
		return nil, err
	}
	return ms, trailing(obj, end)
}

// SpliceParts is Splice(nil, obj, fields) as the slices to send one after
// another, with no copy of obj: each run of fields kept as they are is one
// slice of obj (whitespace between them included), a field whose value
// changes is its key from obj and the new value, a field appended is
// encoded here. ms are obj's Members (so obj is walked once, by whoever
// read its fields first). A relayed request body of half a megabyte thus
// goes upstream as a handful of slices of the client's own buffer.
func SpliceParts(obj []byte, ms []Member, fields []Field) [][]byte {
	parts := make([][]byte, 0, 2*len(fields)+3)
	var seen uint64 // fields found in obj (the first 64)
	n := 0          // fields written
	run := -1       // start in obj of the run of kept fields being gathered
	flush := func(end int) {
		if run >= 0 {
			parts = append(parts, obj[run:end])
			run = -1
		}
	}
	sep := func() {
		if n > 0 {
			parts = append(parts, comma)
		} else {
			parts = append(parts, openBrace)
		}
		n++
	}
	last := 0
	for _, m := range ms {
		i := find(fields, []byte(m.Key))
		if i < 0 {
			if run < 0 {
				sep()
				run = m.Start
			}
			last = m.End
			continue
		}
		flush(last)
		if i < 64 {
			seen |= 1 << i
		}
		switch fields[i].Mode {
		case Delete:
			continue
		case Set, Replace:
			sep()
			parts = append(parts, obj[m.Start:m.Value], fields[i].Value)
		default: // Default: the field is there, as it is
			sep()
			parts = append(parts, obj[m.Start:m.End])
		}
	}
	flush(last)
	for i := range fields {
		f := &fields[i]
		if i < 64 && seen&(1<<i) != 0 || f.Mode == Replace || f.Mode == Delete || dup(fields[:i], f.Key) {
			continue
		}
		sep()
		kv := json.AppendEscape(make([]byte, 0, len(f.Key)+len(f.Value)+3), f.Key, 0)
		kv = append(append(kv, ':'), f.Value...)
		parts = append(parts, kv)
	}
	if n == 0 {
		parts = append(parts, openBrace)
	}
	return append(parts, closeBrace)
}

var (
	comma      = []byte{','}
	openBrace  = []byte{'{'}
	closeBrace = []byte{'}'}
)
