package httpcall

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmguard/llmguard/provider"
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

// TestPartsWrittenWhole: over plain HTTP the shared transport has a parts
// body write itself to the connection (one writev of the slices, no copy
// through the transport's 32 KB buffer, which a request of a 1 MB body
// allocated before), and the upstream reads the body as joined.
func TestPartsWrittenWhole(t *testing.T) {
	parts := [][]byte{[]byte(`{"model":"m",`), bytes.Repeat([]byte(`"x":"\"y\"\n",`), 80000), []byte(`"z":1}`)}
	want := bytes.Join(parts, nil)
	var bad atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var got bytes.Buffer
		got.Grow(len(want) + bytes.MinRead) // ReadFrom keeps MinRead free
		if _, err := got.ReadFrom(r.Body); err != nil || !bytes.Equal(got.Bytes(), want) {
			bad.Add(1)
		}
	}))
	defer srv.Close()
	client := provider.NewHTTPClient(nil)
	defer client.CloseIdleConnections()
	h := newCountHold()
	post := func() {
		resp, err := Call{Provider: "p"}.PostParts(t.Context(), client, srv.URL, parts, h, NewHeaders())
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	post() // the connection, and the server's buffers
	const n = 10
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		post()
	}
	runtime.ReadMemStats(&after)
	h.waitReleased(t, n+1)
	if b := bad.Load(); b != 0 {
		t.Errorf("upstream read %d bodies not as sent", b)
	}
	// Each request's own allocations (client and server) are a few KB
	// beside the server's copy of the body.
	if per := (after.TotalAlloc-before.TotalAlloc)/n - uint64(len(want)); per > 24<<10 && !raceOn {
		t.Errorf("%d bytes allocated a request beside the body's copy, want under 24 KiB (no copy buffer)", per)
	}
}

// TestPartsBodyCloseWhileWritten: a Close while WriteBuffers writes (the
// transport may close a body on another goroutine) returns at once and
// leaves the release to the write's end: the buffer is never given back
// while the kernel may still read it.
func TestPartsBodyCloseWhileWritten(t *testing.T) {
	parts := [][]byte{bytes.Repeat([]byte("a"), 1<<16), []byte("b")}
	h := newCountHold()
	b, err := newPartsBody(parts, h)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	wrote := make(chan int64)
	go func() {
		n, _ := b.WriteBuffers(pw, 1<<20)
		pw.Close()
		wrote <- n
	}()
	if _, err := io.ReadFull(pr, make([]byte, 10)); err != nil { // the write is under way
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { b.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for the write")
	}
	if r := h.released.Load(); r != 0 {
		t.Fatalf("%d releases during the write, want 0", r)
	}
	rest, _ := io.ReadAll(pr)
	if n := <-wrote; n != 1<<16+1 || len(rest) != 1<<16+1-10 {
		t.Errorf("wrote %d bytes, read %d after the first 10; want %d", n, len(rest), 1<<16+1)
	}
	h.waitReleased(t, 1)
	if _, err := b.WriteBuffers(io.Discard, 1<<20); !errors.Is(err, http.ErrBodyReadAfterClose) {
		t.Errorf("WriteBuffers after Close = %v, want %v", err, http.ErrBodyReadAfterClose)
	}
	if a, r := h.acquired.Load(), h.released.Load(); a != 1 || r != 1 {
		t.Errorf("%d acquires, %d releases; want 1, 1", a, r)
	}
}

func TestPartsLimit(t *testing.T) {
	bufs := [][]byte{[]byte("abc"), []byte("de"), []byte("f")}
	for n, want := range []string{"", "a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdef"} {
		b := limit(bufs, int64(n))
		if got := string(bytes.Join(b, nil)); got != want {
			t.Errorf("limit(%d) = %q, want %q", n, got, want)
		}
	}
	if string(bytes.Join(bufs, nil)) != "abcdef" {
		t.Errorf("limit changed its input: %q", bufs)
	}
}

// TestPartsWriteCut: a parts body the upstream stops reading (it answers
// early, or hangs until the caller gives up) ends its write, and its hold
// is released: the write holds no lock the transport's Close waits on.
func TestPartsWriteCut(t *testing.T) {
	parts := [][]byte{[]byte(`{"a":"`), bytes.Repeat([]byte("x"), 16<<20), []byte(`"}`)}
	got, stop := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/early" {
			w.WriteHeader(http.StatusRequestEntityTooLarge) // without reading the body
			return
		}
		got <- struct{}{}
		<-stop // an unread body: the server does not see the client go
	}))
	defer srv.Close()
	defer close(stop)
	client := provider.NewHTTPClient(nil)
	defer client.CloseIdleConnections()

	h := newCountHold()
	resp, err := Call{Provider: "p"}.PostParts(t.Context(), client, srv.URL+"/early", parts, h, NewHeaders())
	if err == nil {
		resp.Body.Close()
	}
	h.waitReleased(t, 1)

	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-got; cancel() }() // the upstream has the request, not the body
	if _, err := (Call{Provider: "p"}).PostParts(ctx, client, srv.URL+"/hang", parts, h, NewHeaders()); err == nil {
		t.Error("PostParts cut short: no error")
	}
	h.waitReleased(t, 2)
}
