package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// FuzzReader checks Reader against scanReader, the reader it replaced
// (bufio.Scanner splitting lines, an event parsed line by line): the same
// events and the same error for any input, read in pieces of any size,
// ending in io.EOF or another error, with Buffered asked between events
// and with Borrow.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"event: message_start\ndata: {\"a\":1}\n\nevent: ping\ndata: {}\n\n",
		": keep-alive\n\ndata: {\"x\":2}\n\ndata: [DONE]\n\n",
		"data: a\ndata:\ndata: b\n\n", "data: x", "event: error\n", "",
		"data: a\r\n\r\nid: 7\r\ndata\r\n\r\nretry: 10\n\ndata:  two spaces\n\n",
		"event: a\n\nevent: a\ndata: 1\n\nevent: b\nid\n\n:c\ndata: z\r",
		"\n\n\r\ndata: \n\nid: x\n", "data:\n\r",
	} {
		f.Add(s, uint64(0))
		f.Add(s, uint64(0x1234567))
	}
	f.Fuzz(func(t *testing.T, in string, seed uint64) {
		want := readAll(t, newScanReader(newChopped(in, seed)), nil)
		r := NewReader(newChopped(in, seed))
		if seed&1 != 0 {
			r.Borrow()
		}
		got := readAll(t, r, rand.New(rand.NewPCG(seed, 1)))
		if len(got) != len(want) {
			t.Fatalf("%q: %d results, want %d:\n%q\n%q", in, len(got), len(want), got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%q: result %d is %q, want %q", in, i, got[i], want[i])
			}
		}
	})
}

// eventReader is Reader or scanReader.
type eventReader interface{ Next() (Event, error) }

// readAll reads r to its end: each event (its data copied at once, as a
// borrowing caller must) or error, as a string. With rng, Buffered is
// asked (of a *Reader) before some calls.
func readAll(t *testing.T, r eventReader, rng *rand.Rand) []string {
	t.Helper()
	var out []string
	for range 1000 {
		if rd, ok := r.(*Reader); ok && rng != nil && rng.IntN(2) == 0 {
			rd.Buffered()
		}
		ev, err := r.Next()
		if err != nil {
			// and what a call after the end returns
			_, again := r.Next()
			return append(out, "error: "+err.Error(), "then: "+fmt.Sprint(again))
		}
		out = append(out, "event "+ev.Name+" id "+ev.ID+" data "+string(ev.Data))
	}
	t.Fatal("no end")
	return nil
}

// chopped reads its input in pieces of pseudo-random sizes (empty reads
// among them), then ends with io.EOF, or another error, or io.EOF returned
// with the last piece, as the seed says.
type chopped struct {
	in  string
	rng *rand.Rand
	end error
}

var errBroken = errors.New("broken")

func newChopped(in string, seed uint64) *chopped {
	c := &chopped{in: in, rng: rand.New(rand.NewPCG(seed, 0)), end: io.EOF}
	if seed&2 != 0 {
		c.end = errBroken
	}
	return c
}

func (c *chopped) Read(b []byte) (int, error) {
	if c.in == "" {
		return 0, c.end
	}
	n := min(len(b), len(c.in), c.rng.IntN(24))
	copy(b, c.in[:n])
	c.in = c.in[n:]
	if c.in == "" && c.end == io.EOF && c.rng.IntN(2) == 0 {
		return n, io.EOF
	}
	return n, nil
}

// scanReader is the Reader that Reader replaced, kept as FuzzReader's
// reference: bufio.Scanner splits the lines, Next parses them one by one.
type scanReader struct {
	sc   *bufio.Scanner
	data []byte
}

func newScanReader(r io.Reader) *scanReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	return &scanReader{sc: sc}
}

func (r *scanReader) Next() (Event, error) {
	var ev Event
	data := r.data[:0]
	defer func() { r.data = data[:0] }()
	pending, dataLines := false, 0
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			if pending {
				ev.Data = bytes.Clone(data)
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		switch string(field) {
		case "event":
			ev.Name = string(value)
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
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Event{}, ErrLineTooLong
		}
		return Event{}, err
	}
	if pending {
		if dataLines > 0 {
			ev.Data = bytes.Clone(data)
			return ev, nil
		}
		return Event{}, io.ErrUnexpectedEOF
	}
	return Event{}, io.EOF
}
