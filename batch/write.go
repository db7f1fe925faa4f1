package batch

import "time"

// pending is a record on its way to the results file.
type pending struct {
	rec     *Record
	line    []byte
	written chan struct{} // closed once the line is durable, or dropped
}

// record encodes rec and queues it for the results file; the channel is
// closed once it is on disk, or dropped because the file failed.
func (r *Runner) record(rec *Record) <-chan struct{} {
	line := rec.encode(nil, r.in.Format, r.cfg.Codec, time.Now())
	rec.res, rec.err = nil, nil
	p := &pending{rec: rec, line: line, written: make(chan struct{})}
	r.writes <- p
	return p.written
}

// write appends queued records to the results file, as many at once as
// are waiting, each group made durable by one fsync before its records
// count as done.
func (r *Runner) write(done chan<- struct{}) {
	defer close(done)
	var buf []byte
	group := make([]*pending, 0, 64)
	for p := range r.writes {
		group = append(group[:0], p)
	more:
		for len(group) < 256 {
			select {
			case q, ok := <-r.writes:
				if !ok {
					break more
				}
				group = append(group, q)
			default:
				break more
			}
		}
		buf = buf[:0]
		for _, q := range group {
			buf = append(buf, q.line...)
		}
		r.mu.Lock()
		werr := r.st.werr
		r.mu.Unlock()
		if werr == nil {
			werr = r.out.append(buf)
			if werr != nil {
				r.mu.Lock()
				r.st.werr = werr
				r.mu.Unlock()
				r.stop("writing the results failed: " + werr.Error())
			}
		}
		if werr != nil { // not written: not done, and what their answers cost is lost
			r.mu.Lock()
			for _, q := range group {
				r.st.lost += q.rec.CostUSD
			}
			r.mu.Unlock()
			for _, q := range group {
				close(q.written)
			}
			continue
		}
		for _, q := range group {
			r.ack(q.rec)
			close(q.written)
		}
	}
}

// ack counts a record on disk.
func (r *Runner) ack(rec *Record) {
	r.mu.Lock()
	s := &r.st
	switch rec.Status {
	case StatusOK:
		s.served++
	case StatusFailed:
		s.failed++
		s.byClass[rec.Class]++
	case StatusCanceled:
		s.canceled++
	}
	r.mu.Unlock()
	r.emit(Event{Kind: EventItem, Record: rec})
}
