package gateway

import (
	"net/http"
	"sync"
	"time"
)

// coalescer holds what a stream's events write between flushes, so that
// the events of one upstream read reach the response in one Write, as a
// proxy's copy writes what it read (a Write of net/http's costs more than
// an append), not one Write each; and it spaces its flushes by flushGap:
// a flush asked for sooner after the one before waits for the rest of the
// gap, on a timer, taking with it what comes meanwhile. The first flush,
// the first token's, goes out at once, and so does every flush of a stream
// whose events come further apart than the gap (a model's tokens, tens of
// milliseconds apart); only events that come in quick succession (a burst
// a fast upstream writes event by event) share a write.
type coalescer struct {
	http.ResponseWriter

	mu      sync.Mutex // all below, against the timer's flush
	buf     []byte
	err     error       // the response's, once a Write failed: the client went away
	last    time.Time   // the last flush (zero: none yet)
	late    *time.Timer // the flush that waits for the gap (nil until one did)
	pending bool        // late is armed for a flush
	ended   bool        // end ran: the response is the handler's again
}

// flushGap is the least time between two flushes of a stream.
const flushGap = time.Millisecond

// coalesceMax is the most a coalescer holds before it writes it (not
// flushing).
const coalesceMax = 32 << 10

func (b *coalescer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) >= coalesceMax {
		b.send()
	}
	return len(p), nil
}

// send writes what the coalescer holds to the response (under mu).
func (b *coalescer) send() {
	if len(b.buf) > 0 && b.err == nil && !b.ended {
		_, b.err = b.ResponseWriter.Write(b.buf)
	}
	b.buf = b.buf[:0]
}

// Flush implements http.Flusher: what the coalescer holds goes out, now or,
// within flushGap of the last flush, when the gap has passed.
func (b *coalescer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending || b.ended {
		return // the timer's flush takes it
	}
	now := time.Now()
	if wait := flushGap - now.Sub(b.last); !b.last.IsZero() && wait > 0 {
		b.pending = true
		if b.late == nil {
			b.late = time.AfterFunc(wait, b.flushLate)
		} else {
			b.late.Reset(wait)
		}
		return
	}
	b.flush(now)
}

// flush writes what the coalescer holds and flushes the response (under
// mu).
func (b *coalescer) flush(now time.Time) {
	b.last = now
	b.send()
	if f, ok := b.ResponseWriter.(http.Flusher); ok && b.err == nil {
		f.Flush()
	}
}

// flushLate is the timer's flush of what waited for the gap.
func (b *coalescer) flushLate() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.pending || b.ended {
		return
	}
	b.pending = false
	b.flush(time.Now())
}

// end writes what is left, without flushing (the handler's return does),
// and stops the timer: the response is the handler's again.
func (b *coalescer) end() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.send()
	b.ended = true
	if b.late != nil {
		b.late.Stop()
	}
}
