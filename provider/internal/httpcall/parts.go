package httpcall

import (
	"errors"
	"net"
	"net/http"
	"slices"
	"sync"

	"github.com/llmguard/llmguard/provider"
)

// errReused is the error for a request whose body's buffer its maker has
// reused (provider.Hold): only an attempt that outlived its request, such
// as a hedge that lost, meets it.
var errReused = errors.New("request body no longer held: the request is done")

// partsBody is a request body sent as parts (NewRequestParts) that holds
// their buffer from its making until it is closed. Read and Close exclude
// each other: the transport may close a body on one goroutine while its
// write loop reads it on another, and the buffer must not be given back
// during a read.
type partsBody struct {
	mu     sync.Mutex
	bufs   net.Buffers // reading consumes it: a copy of the parts
	hold   provider.Hold
	closed bool
}

// newPartsBody returns a body of parts, having acquired hold (when not nil).
func newPartsBody(parts [][]byte, hold provider.Hold) (*partsBody, error) {
	if hold != nil && !hold.Acquire() {
		return nil, errReused
	}
	return &partsBody{bufs: net.Buffers(slices.Clone(parts)), hold: hold}, nil
}

func (b *partsBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	return b.bufs.Read(p)
}

// Close releases the hold (once).
func (b *partsBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed, b.bufs = true, nil
		if b.hold != nil {
			b.hold.Release()
		}
	}
	return nil
}
