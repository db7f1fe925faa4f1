package sse

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReader(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Event
		wantErr error
	}{
		{"anthropic", "event: message_start\ndata: {\"a\":1}\n\nevent: ping\ndata: {}\n\n",
			[]Event{{Name: "message_start", Data: []byte(`{"a":1}`)}, {Name: "ping", Data: []byte(`{}`)}}, io.EOF},
		{"openai crlf-free with comments", ": keep-alive\n\ndata: {\"x\":2}\n\ndata: [DONE]\n\n",
			[]Event{{Data: []byte(`{"x":2}`)}, {Data: []byte(`[DONE]`)}}, io.EOF},
		{"multi-line data", "data: a\ndata:\ndata: b\n\n", []Event{{Data: []byte("a\n\nb")}}, io.EOF},
		{"last event without blank line", "data: x", []Event{{Data: []byte("x")}}, io.EOF},
		{"truncated event name only", "event: error\n", nil, io.ErrUnexpectedEOF},
		{"empty", "", nil, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.in))
			var got []Event
			var err error
			for {
				var ev Event
				ev, err = r.Next()
				if err != nil {
					break
				}
				got = append(got, ev)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLineTooLong(t *testing.T) {
	r := NewReader(strings.NewReader("data: " + strings.Repeat("x", MaxLine+10) + "\n\n"))
	if _, err := r.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}
}

func TestWriterRoundTrip(t *testing.T) {
	rec := httptest.NewRecorder()
	w := NewWriter(rec)
	if err := w.Event("content_block_delta", []byte("{\"t\":\"a\"}")); err != nil {
		t.Fatal(err)
	}
	w.Data([]byte("two\nlines"))
	w.Comment("keep-alive")
	if got := rec.Header().Get("Content-Type"); got != "text/event-stream" {
		t.Errorf("content-type %q", got)
	}
	if !rec.Flushed {
		t.Error("not flushed")
	}
	r := NewReader(bytes.NewReader(rec.Body.Bytes()))
	ev, _ := r.Next()
	if ev.Name != "content_block_delta" || string(ev.Data) != `{"t":"a"}` {
		t.Errorf("first event %+v", ev)
	}
	ev, _ = r.Next()
	if string(ev.Data) != "two\nlines" {
		t.Errorf("second event %q", ev.Data)
	}
	if _, err := r.Next(); err != io.EOF || r.Comments != 1 {
		t.Errorf("end: err %v comments %d", err, r.Comments)
	}
}

// pieces is a reader whose each Read returns the next piece, as a network
// read returns what arrived.
type pieces []string

func (p *pieces) Read(b []byte) (int, error) {
	if len(*p) == 0 {
		return 0, io.EOF
	}
	n := copy(b, (*p)[0])
	if (*p)[0] = (*p)[0][n:]; (*p)[0] == "" {
		*p = (*p)[1:]
	}
	return n, nil
}

func TestReaderBuffered(t *testing.T) {
	tests := []struct {
		name string
		in   pieces
		want []bool // Buffered after each event
	}{
		{"one event a read", pieces{"data: a\n\n", "data: b\n\n"}, []bool{false, false}},
		{"a burst in one read", pieces{"data: a\n\ndata: b\n\nevent: x\ndata: c\n\n"}, []bool{true, true, false}},
		{"the next event half read", pieces{"data: a\n\ndata: b", "\n\n"}, []bool{false, false}},
		{"the next event without its blank line", pieces{"data: a\n\ndata: b\n", "\n"}, []bool{false, false}},
		{"only a comment after", pieces{"data: a\n\n: keep-alive\n\n", "data: b\n\n"}, []bool{false, false}},
		{"a comment before the next", pieces{"data: a\n\n: keep-alive\n\ndata: b\n\n"}, []bool{true, false}},
		{"crlf", pieces{"data: a\r\n\r\ndata: b\r\n\r\n"}, []bool{true, false}},
		{"an unknown field is no event", pieces{"data: a\n\nretry: 10\n\n", "data: b\n\n"}, []bool{false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			r := NewReader(&in)
			if r.Buffered() {
				t.Error("buffered before the first read")
			}
			var got []bool
			for {
				if _, err := r.Next(); err != nil {
					break
				}
				got = append(got, r.Buffered())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Buffered after each event (-want +got):\n%s", diff)
			}
		})
	}
}

// flushCounter counts flushes.
type flushCounter struct {
	bytes.Buffer
	n int
}

func (f *flushCounter) Flush() { f.n++ }

func TestWriterCoalesce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f flushCounter
		w := NewWriter(&f)
		w.Data([]byte("a"))
		if f.n != 1 {
			t.Fatalf("%d flushes by default, want 1 an event", f.n)
		}
		w.Coalesce(5 * time.Millisecond)
		w.Data([]byte("b"))
		w.Comment("c")
		time.Sleep(4 * time.Millisecond)
		w.Data([]byte("d"))
		if f.n != 1 {
			t.Errorf("%d flushes, want none within the bound", f.n-1)
		}
		time.Sleep(time.Millisecond)
		w.Data([]byte("e")) // 5ms after b: all go
		if f.n != 2 {
			t.Errorf("%d flushes, want one at the bound", f.n-1)
		}
		w.Data([]byte("f"))
		w.Flush()
		time.Sleep(10 * time.Millisecond)
		w.Data([]byte("g")) // the oldest held: g itself
		if f.n != 3 || f.String() != "data: a\n\ndata: b\n\n: c\n\ndata: d\n\ndata: e\n\ndata: f\n\ndata: g\n\n" {
			t.Errorf("%d flushes, body %q", f.n, f.String())
		}
	})
}

// TestWriterFlushNext: events the caller flushes after are not timed
// against the bound (they may take any time); after the flush, the bound
// holds again.
func TestWriterFlushNext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f flushCounter
		w := NewWriter(&f)
		w.Coalesce(5 * time.Millisecond)
		w.FlushNext()
		w.Data([]byte("a"))
		time.Sleep(10 * time.Millisecond)
		w.Data([]byte("b"))
		if f.n != 0 {
			t.Errorf("%d flushes of events flushed next, want none", f.n)
		}
		w.Flush()
		w.Data([]byte("c"))
		time.Sleep(5 * time.Millisecond)
		w.Data([]byte("d")) // 5ms after c: the bound again
		if f.n != 2 || f.String() != "data: a\n\ndata: b\n\ndata: c\n\ndata: d\n\n" {
			t.Errorf("%d flushes, body %q", f.n, f.String())
		}
	})
}

// TestRelease: a released reader reads nothing more (an error, not a
// clean end), and the readers after it, which may read into its buffer,
// read their own streams whole, borrowed or not, across a buffer that
// grows too.
func TestRelease(t *testing.T) {
	r := NewReader(strings.NewReader("data: first\n\ndata: second\n\n"))
	if ev, err := r.Next(); err != nil || string(ev.Data) != "first" {
		t.Fatalf("Next = %q, %v", ev.Data, err)
	}
	r.Release()
	if r.Buffered() {
		t.Error("a released reader says an event is buffered")
	}
	if _, err := r.Next(); err == nil || err == io.EOF {
		t.Errorf("Next after Release = %v, want an error that is not io.EOF", err)
	}
	long := strings.Repeat("x", 3*bufSize) // grows the buffer past the first
	for i, in := range []string{"data: a\n\ndata: b\n\n", "data: " + long + "\n\ndata: c\n\n", "data: d\n\n"} {
		for _, borrow := range []bool{false, true} {
			r := NewReader(strings.NewReader(in))
			if borrow {
				r.Borrow()
			}
			var got []string
			for {
				ev, err := r.Next()
				if err != nil {
					if err != io.EOF {
						t.Fatalf("stream %d: %v", i, err)
					}
					break
				}
				got = append(got, string(ev.Data))
			}
			r.Release()
			want := strings.Split(strings.ReplaceAll(strings.ReplaceAll(in, "data: ", ""), "\n\n", "|"), "|")
			if diff := cmp.Diff(want[:len(want)-1], got); diff != "" {
				t.Errorf("stream %d (borrow %v) (-want +got):\n%s", i, borrow, diff)
			}
		}
	}
}
