package gateway

import (
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/internal/httpbody"
)

// A burst of large requests leaves its garbage on the heap until the next
// collection, which an idle process may not run for two minutes (the
// runtime's forced GC), and the runtime returns freed memory to the system
// only gradually after that: memory stayed at the burst's level for
// minutes. So the server keeps no answer buffer above maxPooled, keeps at
// most maxPoolBytes of idle request-body buffers (bodyPool), and
// reclaimAfter after the last request body above maxPooled (when a burst
// has ended) it empties that pool and runs one collection that returns
// free memory to the system.

// reclaimAfter is how long after the last large request body the server
// returns free memory to the system.
const reclaimAfter = 5 * time.Second

// reclaimer runs free once reclaimAfter has passed since the last call of
// large, having emptied bodies. It is safe for concurrent use; the zero
// value is not usable.
type reclaimer struct {
	mu     sync.Mutex
	timer  *time.Timer
	free   func() // debug.FreeOSMemory; tests swap it
	bodies bodyPool
}

func newReclaimer() *reclaimer { return &reclaimer{free: debug.FreeOSMemory} }

// large notes a request body of n bytes: one above maxPooled (re)starts the
// countdown.
func (r *reclaimer) large(n int) {
	if n <= maxPooled {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer == nil {
		r.timer = time.AfterFunc(reclaimAfter, func() {
			r.bodies.drain()
			r.free()
		})
		return
	}
	r.timer.Reset(reclaimAfter)
}

// Request bodies (issue 19). Reading a long body into a buffer of its own
// cost more than relaying it: a fresh 512 KB buffer is zeroed and faulted
// in (about 200 µs), and its garbage drives the collector. So a chat
// request's body between minPooledBody and maxPooledBody bytes is read into
// a buffer of bodyPool, which goes back to the pool once nothing reads it
// any more (pooledBody): its handler has returned, every upstream send of
// its slices is closed, and nothing decoded from it is kept.
const (
	minPooledBody = 32 << 10 // smaller ones are cheap to allocate
	maxPooledBody = 1 << 20  // larger ones are left to the collector
	maxPoolBytes  = 8 << 20  // idle buffers the pool keeps at most
)

// bodyClasses are the pool's buffer sizes: 64 KiB doubling up to
// maxPooledBody.
const bodyClasses = 5

// classOf is the index of the smallest buffer size of the pool that holds n
// bytes (n at most maxPooledBody).
func classOf(n int) int {
	c := 0
	for n > 64<<10<<c {
		c++
	}
	return c
}

// bodyPool holds idle request-body buffers, at most maxPoolBytes of them.
// It is safe for concurrent use; the zero value is empty.
type bodyPool struct {
	mu   sync.Mutex
	free [bodyClasses][][]byte
	idle int // bytes in free
}

// get returns a buffer that holds n bytes (minPooledBody < n <=
// maxPooledBody), of len its class's size.
func (p *bodyPool) get(n int) []byte {
	c := classOf(n)
	p.mu.Lock()
	if l := len(p.free[c]); l > 0 {
		b := p.free[c][l-1]
		p.free[c][l-1] = nil
		p.free[c] = p.free[c][:l-1]
		p.idle -= len(b)
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	return make([]byte, 64<<10<<c)
}

// put keeps b (from get) for a later get, unless the pool is full.
func (p *bodyPool) put(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idle+len(b) > maxPoolBytes {
		return
	}
	c := classOf(len(b))
	p.free[c] = append(p.free[c], b)
	p.idle += len(b)
}

// drain empties the pool, for the collector to take its buffers.
func (p *bodyPool) drain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free, p.idle = [bodyClasses][][]byte{}, 0
}

// pooledBody is a request body read into a buffer of the reclaimer's pool.
// It is the body's provider.Hold: its handler holds it until it returns
// (end), each upstream send of the body's slices from the send's making to
// its closing, and each reader of the decoded request that may outlive the
// handler, a hedge branch or a shared flight, while it runs (see
// decodeChat); a handler whose client left keeps the buffer for good
// (keep). When the last holder lets go of a buffer not kept, it goes
// back to the pool, and Acquire is false from then on. Safe for concurrent
// use.
type pooledBody struct {
	buf  []byte // the pool's buffer; the body is buf[:n]
	n    int
	r    *reclaimer
	refs atomic.Int32
	kept atomic.Bool
}

// readPooled reads a body of n bytes (its Content-Length) into a buffer of
// the pool. A body longer than n bytes is read whole into a buffer of its
// own (nil pooledBody).
func (r *reclaimer) readPooled(body io.Reader, n int) (*pooledBody, []byte, error) {
	buf := r.bodies.get(n)
	if _, err := io.ReadFull(body, buf[:n]); err != nil {
		r.bodies.put(buf)
		return nil, nil, err
	}
	var probe [1]byte
	switch k, err := io.ReadFull(body, probe[:]); {
	case err == io.EOF: // the body ended where it said
	case err != nil:
		r.bodies.put(buf)
		return nil, nil, err
	default: // longer than it said (not over HTTP/1.1, where the length frames it)
		rest, err := httpbody.Read(body, -1, 0)
		b := append(append(append(make([]byte, 0, n+k+len(rest)), buf[:n]...), probe[:k]...), rest...)
		r.bodies.put(buf)
		return nil, b, err
	}
	pb := &pooledBody{buf: buf, n: n, r: r}
	pb.refs.Store(1) // the handler's
	return pb, buf[:n:n], nil
}

// Acquire implements provider.Hold.
func (b *pooledBody) Acquire() bool {
	for {
		n := b.refs.Load()
		if n == 0 && !b.kept.Load() {
			return false // back in the pool, or on its way
		}
		if b.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release implements provider.Hold: the last holder of a buffer not kept
// gives it back to the pool.
func (b *pooledBody) Release() {
	if b.refs.Add(-1) == 0 && !b.kept.Load() {
		b.r.bodies.put(b.buf)
		b.r.large(b.n) // an idle pool is emptied reclaimAfter after its last use
	}
}

// keep gives the buffer up for good: it never goes back to the pool. The
// caller holds it.
func (b *pooledBody) keep() { b.kept.Store(true) }

// end lets the handler's hold go. A handler whose client left may leave
// work behind that still reads the body (a deduplicated call goes on for
// the callers that share it), so its buffer is kept.
func (b *pooledBody) end(left bool) {
	if left {
		b.keep()
	}
	b.Release()
}
