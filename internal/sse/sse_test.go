package sse

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

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
