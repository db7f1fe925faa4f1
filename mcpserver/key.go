package mcpserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// idempotencyKey is "mcp:" + SHA-256 of the tool name and the canonical
// JSON of the call's arguments (object keys sorted, numbers as written), so
// an agent that retries a call after its own timeout shares the first call's
// upstream request and stored result instead of paying twice.
func idempotencyKey(tool string, req *mcp.CallToolRequest) (string, error) {
	var raw json.RawMessage
	if req != nil && req.Params != nil {
		raw = req.Params.Arguments
	}
	canon, err := canonicalJSON(raw)
	if err != nil {
		return "", fmt.Errorf("invalid arguments: %w", err)
	}
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(canon)
	return "mcp:" + hex.EncodeToString(h.Sum(nil)), nil
}

// canonicalJSON re-encodes a JSON value with sorted object keys, no
// insignificant space and numbers kept as written. Empty input is "{}".
func canonicalJSON(raw []byte) ([]byte, error) {
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
