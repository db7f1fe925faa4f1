package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/llmguard/llmguard/internal/rawjson"
)

// This file holds the append-style JSON helpers the encoders use on the hot
// path instead of reflection-based encoding/json.

// appendInt appends n in decimal.
func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

// appendObject appends raw when it is a valid JSON object, else "{}".
func appendObject(b []byte, raw json.RawMessage) []byte {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '{' && rawjson.Valid(t) {
		return append(b, t...)
	}
	return append(b, '{', '}')
}

// eachField calls fn with each key and raw value of the JSON object body, in
// order, without decoding the values (rawjson.EachField; null is not an
// object here). fn decodes, and so validates, the values it uses.
func eachField(body []byte, fn func(key string, val json.RawMessage) error) error {
	if rawjson.IsNull(body) {
		return errNotObject
	}
	return rawjson.EachField(body, func(k, v []byte) error { return fn(string(k), v) })
}

// errNotObject is the error for a body or element that is not a JSON object.
var errNotObject = errors.New("malformed JSON object")

// objects decodes a JSON array of objects into maps of raw values, copying
// every value (raw may point into a recycled buffer) and validating it.
func objects(raw []byte) ([]map[string]json.RawMessage, error) {
	var out []map[string]json.RawMessage
	err := rawjson.EachElement(raw, func(el []byte) error {
		obj := make(map[string]json.RawMessage, 4)
		err := eachField(el, func(k string, v json.RawMessage) error {
			if !rawjson.Valid(v) {
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
