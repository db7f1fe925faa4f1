package httpbody

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestRead(t *testing.T) {
	body := strings.Repeat("0123456789", 100)
	broken := errors.New("broken")
	for _, tt := range []struct {
		name string
		r    io.Reader
		size int64
		want string
		err  error
	}{
		{"declared", strings.NewReader(body), int64(len(body)), body, nil},
		{"unknown", strings.NewReader(body), -1, body, nil},
		{"shorter than declared", strings.NewReader(body), 5000, body, nil},
		{"longer than declared", strings.NewReader(body), 10, body, nil},
		{"one byte at a time", iotest.OneByteReader(strings.NewReader(body)), int64(len(body)), body, nil},
		{"empty", strings.NewReader(""), 0, "", nil},
		{"breaks off", io.MultiReader(strings.NewReader(body[:300]), iotest.ErrReader(broken)), int64(len(body)), body[:300], broken},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(tt.r, tt.size, 32<<20)
			if !errors.Is(err, tt.err) || !bytes.Equal(got, []byte(tt.want)) {
				t.Errorf("Read = %d bytes, %v; want %d bytes, %v", len(got), err, len(tt.want), tt.err)
			}
			if tt.err == nil && tt.size >= int64(len(body)) && cap(got) != int(tt.size)+1 {
				t.Errorf("cap = %d, want one buffer of %d", cap(got), tt.size+1)
			}
		})
	}
}

// TestReadPrealloc: a declared length past prealloc is believed only up to
// prealloc (the first read is offered prealloc+1 bytes), and the body still
// arrives whole.
func TestReadPrealloc(t *testing.T) {
	body := strings.Repeat("0123456789", 500)
	r := &firstRead{r: strings.NewReader(body)}
	got, err := Read(r, 1<<30, 1000)
	if err != nil || string(got) != body {
		t.Fatalf("Read = %d bytes, %v; want %d bytes", len(got), err, len(body))
	}
	if r.first != 1001 {
		t.Errorf("first read offered %d bytes, want 1001", r.first)
	}
}

// firstRead records the size of the first buffer it is offered.
type firstRead struct {
	r     io.Reader
	first int
}

func (f *firstRead) Read(p []byte) (int, error) {
	if f.first == 0 {
		f.first = len(p)
	}
	return f.r.Read(p)
}
