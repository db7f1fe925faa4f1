// Package httpbody reads an HTTP body whose length the other side declared
// (its Content-Length) into one allocation: the gateway a client's request
// body, the adapters an upstream's answer.
//
//	b, err := httpbody.Read(http.MaxBytesReader(w, r.Body, limit), r.ContentLength, 1<<20)
package httpbody

import (
	"bytes"
	"io"
	"slices"
)

// Read is io.ReadAll whose buffer starts at size+1 bytes, size being the
// declared length (-1, or any negative, for unknown: then it is io.ReadAll)
// believed up to prealloc, so that a body of the declared length is read
// into one allocation, EOF included. A body longer than its buffer grows
// it by doubling. Safe for concurrent use, on different readers.
func Read(r io.Reader, size, prealloc int64) ([]byte, error) {
	if size < 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, min(size, prealloc)+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = slices.Grow(b, max(len(b), bytes.MinRead)) // longer than declared
		}
	}
}
