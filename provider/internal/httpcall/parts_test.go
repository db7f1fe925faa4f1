package httpcall

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countHold is a provider.Hold that counts: Acquire succeeds while ok.
type countHold struct {
	ok                 atomic.Bool
	acquired, released atomic.Int32
	done               chan struct{} // gets a value on each Release
}

func newCountHold() *countHold {
	h := &countHold{done: make(chan struct{}, 16)}
	h.ok.Store(true)
	return h
}

func (h *countHold) Acquire() bool {
	if !h.ok.Load() {
		return false
	}
	h.acquired.Add(1)
	return true
}

func (h *countHold) Release() {
	h.released.Add(1)
	h.done <- struct{}{}
}

// waitReleased waits (up to 10 s) for n Releases in all.
func (h *countHold) waitReleased(t *testing.T, n int32) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for h.released.Load() < n {
		select {
		case <-h.done:
		case <-deadline:
			t.Fatalf("%d releases of %d acquires, want %d", h.released.Load(), h.acquired.Load(), n)
		}
	}
}

// TestPostPartsHold: each body the transport sends holds the parts' buffer
// from its making until the transport closes it, GetBody's too; a hold that
// cannot be acquired makes no request.
func TestPostPartsHold(t *testing.T) {
	parts := [][]byte{[]byte(`{"model":"m",`), []byte(strings.Repeat(`"x":"\"y\"\n",`, 5000)), []byte(`"z":1}`)}
	want := string(bytes.Join(parts, nil))
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if b, _ := io.ReadAll(r.Body); string(b) != want {
			t.Errorf("upstream read %d bytes, want %d", len(b), len(want))
		}
	}))
	defer srv.Close()
	h := newCountHold()
	resp, err := Call{Provider: "p"}.PostParts(t.Context(), srv.Client(), srv.URL, parts, h, NewHeaders())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h.waitReleased(t, 1)
	hr, err := NewRequestParts(t.Context(), srv.URL, parts, h, NewHeaders())
	if err != nil {
		t.Fatal(err)
	}
	again, err := hr.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	if got := h.acquired.Load(); got != 3 {
		t.Errorf("%d acquires after two bodies more, want 3", got)
	}
	hr.Body.Close()
	again.Close()
	again.Close() // once only
	h.waitReleased(t, 3)
	if got := h.released.Load(); got != 3 {
		t.Errorf("%d releases, want 3", got)
	}

	h.ok.Store(false) // the buffer went back to its pool
	c := Call{Provider: "p"}
	if _, err := c.PostParts(t.Context(), srv.Client(), srv.URL, parts, h, NewHeaders()); !errors.Is(err, errReused) {
		t.Errorf("PostParts with a hold gone = %v, want %v", err, errReused)
	}
	if _, err := hr.GetBody(); !errors.Is(err, errReused) {
		t.Errorf("GetBody with a hold gone = %v, want %v", err, errReused)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("upstream got %d requests, want 1", n)
	}
}

// TestPartsBodyCloseWhileRead: the transport may close a body on one
// goroutine while another reads it; the hold is released once, never
// during a read, and a read after the close fails.
func TestPartsBodyCloseWhileRead(t *testing.T) {
	parts := [][]byte{bytes.Repeat([]byte("a"), 1<<20), []byte("b")}
	h := newCountHold()
	b, err := newPartsBody(parts, h)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		p := make([]byte, 512)
		for {
			if _, err := b.Read(p); err != nil {
				if err != io.EOF && !errors.Is(err, http.ErrBodyReadAfterClose) {
					t.Errorf("Read: %v", err)
				}
				return
			}
		}
	})
	wg.Go(func() { b.Close() })
	wg.Wait()
	b.Close()
	if n, err := b.Read(make([]byte, 8)); n != 0 || !errors.Is(err, http.ErrBodyReadAfterClose) {
		t.Errorf("Read after Close = %d, %v; want 0, %v", n, err, http.ErrBodyReadAfterClose)
	}
	if a, r := h.acquired.Load(), h.released.Load(); a != 1 || r != 1 {
		t.Errorf("%d acquires, %d releases; want 1, 1", a, r)
	}
}
