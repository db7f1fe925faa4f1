package mcpcall

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Key is "mcp:" + SHA-256 of the tool name and the canonical JSON of the
// call's arguments (object keys sorted, numbers as written): the
// idempotency key of a call that names none, so an agent that retries a
// call after its own timeout shares the first call's flight and stored
// result instead of running it twice. It fails on arguments that are not
// one JSON value.
func Key(tool string, args json.RawMessage) (string, error) {
	canon, err := CanonicalJSON(args)
	if err != nil {
		return "", fmt.Errorf("invalid arguments: %w", err)
	}
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(canon)
	return "mcp:" + hex.EncodeToString(h.Sum(nil)), nil
}

// CanonicalJSON re-encodes a JSON value with sorted object keys, no
// insignificant space and numbers kept as written. Empty input is "{}".
func CanonicalJSON(raw []byte) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("{}"), nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
