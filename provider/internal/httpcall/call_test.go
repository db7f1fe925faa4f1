package httpcall

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadAll(t *testing.T) {
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
			got, err := readAll(tt.r, tt.size)
			if !errors.Is(err, tt.err) || !bytes.Equal(got, []byte(tt.want)) {
				t.Errorf("readAll = %d bytes, %v; want %d bytes, %v", len(got), err, len(tt.want), tt.err)
			}
			if tt.err == nil && tt.size >= int64(len(body)) && cap(got) != int(tt.size)+1 {
				t.Errorf("cap = %d, want one buffer of %d", cap(got), tt.size+1)
			}
		})
	}
}
