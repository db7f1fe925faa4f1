// Package sse is llmguard's one Server-Sent Events reader and writer, used by
// the provider adapters, the gateway and the mock.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
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
type Reader struct {
	sc *bufio.Scanner
	// rest is what the scanner holds after its last line: read from the
	// stream, not parsed yet (valid until the next Scan).
	rest []byte
	// data collects an event's data lines; name is the last event name
	// read, returned again (not allocated again) when the next repeats it.
	data []byte
	name string
	// slab is where events' data is kept: one allocation for many small
	// events, not one each.
	slab []byte
	// Comments counts comment lines (": keep-alive") seen so far.
	Comments int
}

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	rd := &Reader{sc: sc}
	sc.Split(rd.scanLine)
	return rd
}

// scanLine is bufio.ScanLines, noting what is left after each line.
func (r *Reader) scanLine(data []byte, atEOF bool) (int, []byte, error) {
	adv, line, err := bufio.ScanLines(data, atEOF)
	if line != nil {
		r.rest = data[adv:]
	}
	return adv, line, err
}

// Buffered reports whether the next call to Next returns an event already
// read from the stream, without reading it again (which may wait for the
// network). A relay flushes what it wrote only when nothing more is
// buffered, so that a burst of events costs one flush.
func (r *Reader) Buffered() bool {
	rest, pending := r.rest, false
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return false // no complete line left
		}
		line := bytes.TrimSuffix(rest[:i], []byte{'\r'})
		rest = rest[i+1:]
		switch {
		case len(line) == 0:
			if pending {
				return true
			}
		case line[0] == ':':
		default:
			field, _, _ := bytes.Cut(line, []byte{':'})
			switch string(field) {
			case "event", "data", "id":
				pending = true
			}
		}
	}
}

// Next returns the next event. It returns io.EOF at a clean end of stream
// (no partial event pending) and io.ErrUnexpectedEOF when the stream ended
// inside an event. Data lines of one event are joined with "\n".
func (r *Reader) Next() (Event, error) {
	var ev Event
	data := r.data[:0]
	defer func() { r.data = data[:0] }()
	pending, dataLines := false, 0
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			if pending {
				ev.Data = r.keep(data)
				return ev, nil
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
			if dataLines > 0 {
				data = append(data, '\n')
			}
			data = append(data, value...)
			dataLines++
			pending = true
		case "id":
			ev.ID = string(value)
			pending = true
		}
	}
	r.rest = nil // the scanner is done
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Event{}, ErrLineTooLong
		}
		return Event{}, err
	}
	if pending {
		// A final event without its blank line: deliver it if it has data,
		// the caller decides whether the stream was complete.
		if dataLines > 0 {
			ev.Data = r.keep(data)
			return ev, nil
		}
		return Event{}, io.ErrUnexpectedEOF
	}
	return Event{}, io.EOF
}

// slabSize is the size of the arrays small events' data is kept in.
const slabSize = 8 << 10

// keep returns a copy of data that is the event's own.
func (r *Reader) keep(data []byte) []byte {
	if len(data) == 0 || len(data) > slabSize/8 {
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
	s.held = time.Time{}
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
	case s.held.IsZero():
		s.held = time.Now()
	case time.Since(s.held) >= s.bound:
		s.Flush()
	}
	return nil
}
