// Package sse is llmguard's one Server-Sent Events reader and writer, used by
// the provider adapters, the gateway and the mock.
package sse

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// Event is one SSE event. Name is "" for unnamed ("message") events. The
// Data of an event a Reader returns is its own: the Reader never writes it
// again (small events share a backing array, each slice capped at its
// length, so an append to one copies it).
type Event struct {
	Name string
	Data []byte
	ID   string
}

// MaxLine bounds one line of an event stream (1 MiB).
const MaxLine = 1 << 20

// ErrLineTooLong is returned when a line exceeds MaxLine.
var ErrLineTooLong = errors.New("sse: line too long")

// Reader reads events from a stream. It is not safe for concurrent use.
//
// It reads into a buffer of its own and finds an event's lines with
// bytes.IndexByte: an event is found once (by Buffered or Next) and parsed
// once, with no line-by-line copies. Lines end at "\n", a "\r" before it
// dropped (as bufio.ScanLines splits them; FuzzReader checks the two read
// the same).
type Reader struct {
	src io.Reader
	// buf[off:end] is read and not returned yet; lines before at are the
	// next event's, looked at already (pend: one of them was a field of
	// it); evEnd is where that event ends, once found (-1: not yet).
	buf          []byte
	off, at, end int
	evEnd        int
	pend         bool
	// ends are where the first lines after off end (at their "\n", from
	// off) as find found them, nends of them: parse does not look for
	// them again (most events are a line or two).
	ends  [2]int
	nends int
	// err is the source's error (io.EOF included) once it returned one;
	// bad a line too long, which ends the stream at once.
	err, bad error
	empties  int // reads in a row that returned nothing
	// borrow: Data is valid until the next Next (see Borrow).
	borrow bool
	// data joins an event's data lines; name is the last event name
	// read, returned again (not allocated again) when the next repeats it.
	data []byte
	name string
	// slab is where events' data is kept: one allocation for many small
	// events, not one each.
	slab []byte
	// first is the buffer's first array, from firstBufs while buf is it
	// (Release gives it back).
	first *[bufSize]byte
	// Comments counts comment lines (": keep-alive") seen so far.
	Comments int
}

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader { return &Reader{src: r, evEnd: -1} }

// Borrow makes the Data of the events Next returns from now on valid only
// until the next call to Next: the reader's own bytes, not a copy. For a
// reader whose every event is decoded before the next is read.
func (r *Reader) Borrow() { r.borrow = true }

// Buffered reports whether the next call to Next returns an event already
// read from the stream, without reading it again (which may wait for the
// network). A relay flushes what it wrote only when nothing more is
// buffered, so that a burst of events costs one flush.
func (r *Reader) Buffered() bool { return r.evEnd >= 0 || r.find() }

// find looks at the lines read after r.at for the blank line that ends
// the next event, and reports whether it found it (r.evEnd).
func (r *Reader) find() bool {
	for r.bad == nil {
		i := bytes.IndexByte(r.buf[r.at:r.end], '\n')
		if i < 0 {
			return false
		}
		if i >= MaxLine {
			r.bad = ErrLineTooLong
			return false
		}
		if r.nends < len(r.ends) {
			r.ends[r.nends] = r.at + i - r.off
			r.nends++
		}
		line := dropCR(r.buf[r.at : r.at+i])
		r.at += i + 1
		switch {
		case len(line) == 0:
			if r.pend {
				r.evEnd = r.at
				return true
			}
		case line[0] != ':':
			r.pend = r.pend || isField(line)
		}
	}
	return false
}

// isField reports whether line sets an event's field (event, data, id):
// a line that sets no other one is no event (retry, an unknown field).
func isField(line []byte) bool {
	field, _, _ := bytes.Cut(line, []byte{':'})
	switch string(field) {
	case "event", "data", "id":
		return true
	}
	return false
}

func dropCR(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}

// bufSize is a reader's first buffer. A read that stops short of what its
// source holds costs a relay a flush (Buffered says no though the rest is
// there): net/http's client reads a response through a buffer of 4 KB, and
// one Read of a chunked body can return about two of them (it ends the
// chunk it is in), so fill reads into half a buffer or more, of 8 KB or
// more.
const bufSize = 8 << 10

// fill reads more of the stream, making room first: at least half the
// buffer.
func (r *Reader) fill() {
	if r.end-r.at >= MaxLine {
		r.bad = ErrLineTooLong // a line that long and no end in sight
		return
	}
	if r.off == r.end { // all of it returned: start again at the front
		r.off, r.at, r.end, r.nends = 0, 0, 0, 0
	}
	if r.off > 0 && 2*(len(r.buf)-r.end) < len(r.buf) {
		n := copy(r.buf, r.buf[r.off:r.end])
		r.at -= r.off
		r.off, r.end = 0, n
	}
	if 2*(len(r.buf)-r.end) <= len(r.buf) {
		r.grow()
	}
	n, err := r.src.Read(r.buf[r.end:])
	r.end += n
	switch {
	case err != nil:
		r.err = err
	case n > 0:
		r.empties = 0
	default:
		if r.empties++; r.empties >= 100 { // as bufio.Scanner gives up
			r.err = io.ErrNoProgress
		}
	}
}

// firstBufs holds readers' first buffers that Release gave back: a
// stream's reader needs one, and a gateway reads many streams.
var firstBufs = sync.Pool{New: func() any { return new([bufSize]byte) }}

// grow gives the reader a buffer twice as large (the first: bufSize, from
// firstBufs), holding what it read and did not return.
func (r *Reader) grow() {
	if len(r.buf) == 0 {
		r.first = firstBufs.Get().(*[bufSize]byte)
		r.buf = r.first[:]
		return
	}
	b := make([]byte, 2*len(r.buf))
	copy(b, r.buf[:r.end])
	r.buf = b
	if r.first != nil {
		// Nothing returned refers to it any more: Data is a copy, or
		// borrowed until this Next.
		firstBufs.Put(r.first)
		r.first = nil
	}
}

// Release ends the reader's use of its buffer, for another reader to use:
// the reader must not be used again, nor the Data of the last event it
// returned if borrowed (see Borrow). It must not be called while a Read of
// the source may be writing into the buffer.
func (r *Reader) Release() {
	if r.first != nil {
		firstBufs.Put(r.first)
	}
	*r = Reader{err: errReleased, evEnd: -1}
}

// errReleased is what a reader returns once released.
var errReleased = errors.New("sse: reader released")

// Next returns the next event. It returns io.EOF at a clean end of stream
// (no partial event pending) and io.ErrUnexpectedEOF when the stream ended
// inside an event. Data lines of one event are joined with "\n".
func (r *Reader) Next() (Event, error) {
	for r.evEnd < 0 && !r.find() {
		switch {
		case r.bad != nil:
			return Event{}, r.bad
		case r.err != nil && r.at < r.end:
			// A last line without its end is a line.
			r.buf = append(r.buf[:r.end], '\n')
			r.buf = r.buf[:cap(r.buf)]
			r.end++
		case r.err != nil:
			return r.last()
		default:
			r.fill()
		}
	}
	ev, _, _ := r.parse(r.buf[r.off:r.evEnd])
	r.off, r.at, r.evEnd, r.pend, r.nends = r.evEnd, r.evEnd, -1, false, 0
	return ev, nil
}

// last is Next once the stream ended: what is left is at most part of an
// event.
func (r *Reader) last() (Event, error) {
	ev, pending, data := r.parse(r.buf[r.off:r.end])
	r.off, r.at, r.pend, r.nends = r.end, r.end, false, 0
	switch {
	case r.err != io.EOF:
		return Event{}, r.err
	case pending && data:
		// A final event without its blank line: deliver it if it has data,
		// the caller decides whether the stream was complete.
		return ev, nil
	case pending:
		return Event{}, io.ErrUnexpectedEOF
	}
	return Event{}, io.EOF
}

// parse reads the event in b (from off), lines that each end with "\n",
// up to the blank line that ends it. pending: b held some field of an
// event; data: a data line.
func (r *Reader) parse(b []byte) (ev Event, pending, data bool) {
	var one []byte // the one data line's value
	lines := 0
	for j, pos := 0, 0; pos < len(b); j++ {
		end := 0
		if j < r.nends {
			end = r.ends[j] // found already
		} else {
			end = pos + bytes.IndexByte(b[pos:], '\n')
		}
		line := dropCR(b[pos:end])
		pos = end + 1
		if len(line) == 0 {
			if pending {
				break
			}
			continue
		}
		if line[0] == ':' {
			r.Comments++
			continue
		}
		field, value, _ := bytes.Cut(line, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		switch string(field) {
		case "event":
			if string(value) != r.name {
				r.name = string(value)
			}
			ev.Name = r.name
			pending = true
		case "data":
			switch lines++; lines {
			case 1:
				one = value
			case 2:
				r.data = append(append(append(r.data[:0], one...), '\n'), value...)
			default:
				r.data = append(append(r.data, '\n'), value...)
			}
			pending = true
		case "id":
			ev.ID = string(value)
			pending = true
		}
	}
	if lines > 1 {
		one = r.data
	}
	switch {
	case lines == 0:
	case r.borrow:
		ev.Data = one[:len(one):len(one)]
	default:
		ev.Data = r.keep(one)
	}
	return ev, pending, lines > 0
}

// slabSize is the size of the arrays small events' data is kept in.
const slabSize = 8 << 10

// keep returns a copy of data that is the event's own (never nil).
func (r *Reader) keep(data []byte) []byte {
	if len(data) == 0 {
		return []byte{}
	}
	if len(data) > slabSize/8 {
		return bytes.Clone(data)
	}
	if len(data) > cap(r.slab)-len(r.slab) {
		r.slab = make([]byte, 0, slabSize)
	}
	n := len(r.slab)
	r.slab = append(r.slab, data...)
	return r.slab[n:len(r.slab):len(r.slab)]
}

// Writer writes events to an HTTP response, flushing after each unless
// Coalesce says otherwise. It is not safe for concurrent use.
type Writer struct {
	w   io.Writer
	f   http.Flusher
	buf []byte
	// bound: Coalesce's; 0 flushes every event.
	bound time.Duration
	// held: when the oldest event written since the last flush was
	// written (zero: none held).
	held time.Time
	// next: FlushNext was called since the last flush.
	next bool
}

// NewWriter returns a Writer on w. If w is an http.ResponseWriter it sets the
// event-stream headers (unless already set) and flushes after each event.
func NewWriter(w io.Writer) *Writer {
	sw := &Writer{w: w}
	if rw, ok := w.(http.ResponseWriter); ok {
		h := rw.Header()
		if h.Get("Content-Type") == "" {
			h.Set("Content-Type", "text/event-stream")
		}
		h.Set("Cache-Control", "no-cache")
		h.Set("Connection", "keep-alive")
	}
	if f, ok := w.(http.Flusher); ok {
		sw.f = f
	}
	return sw
}

// Coalesce stops the flush after each event: the caller calls Flush when
// it has written what it has (before it waits for more), so that a burst
// of events costs one flush. An event written bound or more after the
// oldest unflushed one flushes them all, so a reader waits at most about
// bound for what the caller wrote while it kept writing. A bound of 0
// flushes after each event again.
func (s *Writer) Coalesce(bound time.Duration) { s.bound = bound }

// FlushNext says that the caller flushes after the events it writes next:
// until it does, the writer does not time them against Coalesce's bound
// (a clock read an event, when each comes alone).
func (s *Writer) FlushNext() { s.next = true }

// Event writes an event named name ("" for none) with data. Data containing
// newlines is split over several data lines.
func (s *Writer) Event(name string, data []byte) error {
	b := s.buf[:0]
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	for {
		line, rest, more := bytes.Cut(data, []byte{'\n'})
		b = append(b, "data: "...)
		b = append(b, line...)
		b = append(b, '\n')
		if !more {
			break
		}
		data = rest
	}
	b = append(b, '\n')
	s.buf = b
	return s.write(b)
}

// Data writes an unnamed event.
func (s *Writer) Data(data []byte) error { return s.Event("", data) }

// Comment writes a comment line (a keep-alive).
func (s *Writer) Comment(text string) error {
	b := append(s.buf[:0], ": "...)
	b = append(b, text...)
	b = append(b, "\n\n"...)
	s.buf = b
	return s.write(b)
}

// Flush flushes the underlying writer if it can.
func (s *Writer) Flush() {
	s.held, s.next = time.Time{}, false
	if s.f != nil {
		s.f.Flush()
	}
}

func (s *Writer) write(b []byte) error {
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	switch {
	case s.bound <= 0:
		s.Flush()
	case s.next: // flushed next
	case s.held.IsZero():
		s.held = time.Now()
	case time.Since(s.held) >= s.bound:
		s.Flush()
	}
	return nil
}
