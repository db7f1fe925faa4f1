package gateway

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"strconv"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
)

// This file holds the append-style JSON helpers the encoders use on the hot
// path instead of reflection-based encoding/json.

// appendJSON appends v as the JSON library encodes it, without HTML
// escaping (as the providers' own APIs write their bodies) and with map keys
// sorted. v is one of the gateway's wire types, made of strings, numbers
// and raw values that are valid JSON, which always encode; should one not,
// nothing is appended and the caller's body is malformed rather than lost.
func appendJSON(b []byte, v any) []byte {
	out, err := json.Append(b, v, json.SortMapKeys)
	if err != nil {
		return b
	}
	return out
}

// appendInt appends n in decimal.
func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

// The unmarshal helpers below are json.Unmarshal(v, p) for the scalar
// request fields every request carries, with a reflection-free path for a
// plain literal; anything else (null, strings, out-of-range or fractional
// integers, malformed input) goes to json.Unmarshal, so values and errors
// are exactly encoding/json's.

// unmarshalInt is json.Unmarshal(v, p) for an int.
func unmarshalInt(v []byte, p *int) error {
	if len(v) <= 18 && rawjson.Number(v) {
		if n, err := strconv.Atoi(string(v)); err == nil {
			*p = n
			return nil
		}
	}
	return stdjson.Unmarshal(v, p)
}

// unmarshalOpt decodes v with unmarshal for an optional (pointer) field: a
// value sets *p, null leaves it as it is.
func unmarshalOpt[T any](v []byte, p **T, unmarshal func([]byte, *T) error) error {
	var x T
	if err := unmarshal(v, &x); err != nil || rawjson.IsNull(v) {
		return err
	}
	*p = &x
	return nil
}

// unmarshalFloat is json.Unmarshal(v, p) for a *float64 field: a number is
// stored in the existing float or a new one.
func unmarshalFloat(v []byte, p **float64) error {
	if rawjson.Number(v) {
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			if *p == nil {
				*p = new(float64)
			}
			**p = f
			return nil
		}
	}
	return stdjson.Unmarshal(v, p)
}

// unmarshalBool is json.Unmarshal(v, p) for a bool.
func unmarshalBool(v []byte, p *bool) error {
	switch string(v) {
	case "true":
		*p = true
		return nil
	case "false":
		*p = false
		return nil
	}
	return stdjson.Unmarshal(v, p)
}

// eachField calls fn with each key and raw value of the JSON object body, in
// order, without decoding the values (rawjson.EachField; null is not an
// object here). fn decodes, and so validates, the values it uses.
func eachField(body []byte, fn func(key string, val json.RawMessage) error) error {
	if rawjson.IsNull(body) {
		return errNotObject
	}
	return rawjson.EachField(body, func(k, v []byte) error { return fn(keyString(k), v) })
}

// knownKeys are the request keys the decoders look at, so that walking a
// request does not allocate a string per key (a map index by string(k)
// does not allocate).
var knownKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p",
		"stream", "stream_options", "stop", "stop_sequences", "metadata", "tools", "tool_choice", "system",
		"fallbacks", "models", "role", "content", "tool_calls", "tool_call_id", "name", "response_format", "seed",
		"user", "parallel_tool_calls", "output_config", "top_k", "thinking", "type", "text"} {
		m[k] = k
	}
	return m
}()

// keyString is string(k), without an allocation for a known key.
func keyString(k []byte) string {
	if s, ok := knownKeys[string(k)]; ok {
		return s
	}
	return string(k)
}

// errNotObject is the error for a body or element that is not a JSON object.
var errNotObject = errors.New("malformed JSON object")

// objects decodes a JSON array of objects into maps of raw values, which
// point into raw, validating each in the walk.
func objects(raw []byte) ([]map[string]json.RawMessage, error) {
	var out []map[string]json.RawMessage
	var obj map[string]json.RawMessage
	err := rawjson.EachObjectValid(raw, func(k, v []byte) error {
		if obj == nil {
			obj = make(map[string]json.RawMessage, 4)
		}
		obj[keyString(k)] = v
		return nil
	}, func(_ int, el []byte) error {
		if obj == nil {
			obj = make(map[string]json.RawMessage, 4)
		}
		out = append(out, obj)
		obj = nil
		switch {
		case rawjson.IsNull(el):
			return errNotObject
		case !isObject(el):
			return rawjson.ErrMalformed
		}
		return nil
	})
	return out, err
}

// messageArray decodes v, a JSON array of message objects, into one M per
// element in one walk: field reads each field (key k, raw value fv) of the
// element at index i into m; an element that is not an object is a type
// error. Both dialects' messages arrays are read by it. Each message is
// decoded in place in the slice (field is not known to the compiler, so a
// message it wrote through a pointer to a local would cost an allocation).
func messageArray[M any](v []byte, field func(m *M, i int, k string, fv []byte) error) ([]M, error) {
	var msgs []M
	var zero M
	done := 0 // elements walked; msgs[done], once appended, is the one being read
	err := rawjson.EachObject(v, func(key, fv []byte) error {
		if len(msgs) == done {
			msgs = append(msgs, zero)
		}
		return field(&msgs[done], done, keyString(key), fv)
	}, func(i int, el []byte) error {
		if len(msgs) == done { // an element without fields
			msgs = append(msgs, zero)
		}
		done++
		if !isObject(el) {
			return typeError("["+strconv.Itoa(i)+"]", "an object with role and content", el)
		}
		return nil
	})
	return msgs, err
}

// isObject and isArray report the kind of a JSON value by its first byte.
func isObject(v []byte) bool { v = bytes.TrimSpace(v); return len(v) > 0 && v[0] == '{' }

func isArray(v []byte) bool { v = bytes.TrimSpace(v); return len(v) > 0 && v[0] == '[' }
