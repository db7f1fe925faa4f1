package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// This file holds the append-style JSON helpers the encoders use on the hot
// path instead of reflection-based encoding/json.

// appendInt appends n in decimal.
func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

// appendObject appends raw when it is a valid JSON object, else "{}".
func appendObject(b []byte, raw json.RawMessage) []byte {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return append(b, t...)
	}
	return append(b, '{', '}')
}

// eachField calls fn with each key and raw value of the JSON object body, in
// order, without decoding the values: one pass over the bytes instead of a
// map decode plus re-validation of every value. Values are checked for
// structure only; fn decodes (and so validates) the ones it uses.
func eachField(body []byte, fn func(key string, val json.RawMessage) error) error {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return errNotObject
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		if skipSpace(body, i+1) != len(body) {
			return errNotObject
		}
		return nil
	}
	for {
		if i >= len(body) || body[i] != '"' {
			return errNotObject
		}
		end, err := skipString(body, i)
		if err != nil {
			return err
		}
		key, err := unquote(body[i:end])
		if err != nil {
			return err
		}
		i = skipSpace(body, end)
		if i >= len(body) || body[i] != ':' {
			return errNotObject
		}
		i = skipSpace(body, i+1)
		vend, err := skipValue(body, i)
		if err != nil {
			return err
		}
		if err := fn(key, json.RawMessage(body[i:vend])); err != nil {
			return err
		}
		i = skipSpace(body, vend)
		if i >= len(body) {
			return errNotObject
		}
		switch body[i] {
		case ',':
			i = skipSpace(body, i+1)
		case '}':
			if skipSpace(body, i+1) != len(body) {
				return errNotObject
			}
			return nil
		default:
			return errNotObject
		}
	}
}

var errNotObject = errors.New("malformed JSON object")

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errNotObject
}

// skipValue returns the index after the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errNotObject
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
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
		return 0, errNotObject
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' {
		j++
	}
	if j == i {
		return 0, errNotObject
	}
	return j, nil
}

// unquote decodes a JSON string literal, without encoding/json when it has
// no escapes or control characters.
func unquote(raw []byte) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		in := raw[1 : len(raw)-1]
		simple := true
		for _, c := range in {
			if c == '\\' || c == '"' || c < 0x20 {
				simple = false
				break
			}
		}
		if simple && utf8.Valid(in) {
			return string(in), nil
		}
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// eachElement calls fn with each raw element of the JSON array raw (null
// is an empty array).
func eachElement(raw []byte, fn func(elem json.RawMessage) error) error {
	i := skipSpace(raw, 0)
	if i < len(raw) && string(raw[i:skipSpace(raw, len(raw))]) == "null" {
		return nil
	}
	if i >= len(raw) || raw[i] != '[' {
		return errNotArray
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return nil
	}
	for {
		end, err := skipValue(raw, i)
		if err != nil {
			return err
		}
		if err := fn(json.RawMessage(raw[i:end])); err != nil {
			return err
		}
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return errNotArray
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case ']':
			return nil
		default:
			return errNotArray
		}
	}
}

var errNotArray = errors.New("malformed JSON array")

// isNull reports whether raw is empty or the literal null.
func isNull(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// objects decodes a JSON array of objects into maps of raw values, copying
// every value (raw may point into a recycled buffer) and validating it.
func objects(raw []byte) ([]map[string]json.RawMessage, error) {
	var out []map[string]json.RawMessage
	err := eachElement(raw, func(el json.RawMessage) error {
		obj := make(map[string]json.RawMessage, 4)
		err := eachField(el, func(k string, v json.RawMessage) error {
			if !json.Valid(v) {
				return errNotObject
			}
			obj[k] = bytes.Clone(v)
			return nil
		})
		out = append(out, obj)
		return err
	})
	return out, err
}
