package httpcall

import (
	"errors"
	"io"
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
// during a read. Over plain TCP the transport has it write its parts to
// the connection itself (WriteBuffers), and a Close during that write
// leaves the release of the hold to its end.
type partsBody struct {
	mu      sync.Mutex
	bufs    net.Buffers // reading consumes it: a copy of the parts
	hold    provider.Hold
	closed  bool
	writing bool // WriteBuffers is writing the parts
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

// WriteBuffers is what the shared transport's connections call (provider.dialBuffers): the parts, at most n
// bytes of them, go to w in one write (writev on a TCP connection: the
// kernel copies them from the client's buffer, with no copy through the
// transport's).
func (b *partsBody) WriteBuffers(w io.Writer, n int64) (int64, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return 0, http.ErrBodyReadAfterClose
	}
	bufs := limit(b.bufs, n)
	b.bufs, b.writing = nil, true
	b.mu.Unlock()
	written, err := bufs.WriteTo(w)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writing = false
	if b.closed {
		b.release() // closed during the write
	}
	return written, err
}

// limit is bufs cut to n bytes.
func limit(bufs net.Buffers, n int64) net.Buffers {
	for i, p := range bufs {
		if int64(len(p)) >= n {
			out := slices.Clone(bufs[:i+1])
			out[i] = p[:n]
			return out
		}
		n -= int64(len(p))
	}
	return bufs
}

// Close releases the hold (once), or has the write in progress release it.
func (b *partsBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed, b.bufs = true, nil
		if !b.writing {
			b.release()
		}
	}
	return nil
}

func (b *partsBody) release() {
	if b.hold != nil {
		b.hold.Release()
	}
}
