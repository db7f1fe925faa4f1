package gateway

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// exchangeLog is the tests' recording upstream: it records every request
// (path, headers, body) and its answer, then lets next (the mock, or a
// scripted handler) answer it.
type exchangeLog struct {
	mu   sync.Mutex
	seen []seenExchange
	next http.Handler
}

type seenExchange struct {
	path      string
	header    http.Header
	req, resp []byte
	done      chan struct{} // closed once resp is set
}

type teeWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (t *teeWriter) Write(b []byte) (int, error) { t.buf.Write(b); return t.ResponseWriter.Write(b) }
func (t *teeWriter) Flush()                      { t.ResponseWriter.(http.Flusher).Flush() }

func (l *exchangeLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	tw := &teeWriter{ResponseWriter: w}
	// Logged in the order the requests arrive: a handler that has written
	// its answer may return after the client's next request was served.
	l.mu.Lock()
	i := len(l.seen)
	done := make(chan struct{})
	l.seen = append(l.seen, seenExchange{path: r.URL.Path, header: r.Header.Clone(), req: b, done: done})
	l.mu.Unlock()
	l.next.ServeHTTP(tw, r)
	l.mu.Lock()
	if i < len(l.seen) && l.seen[i].done == done { // not reset meanwhile
		l.seen[i].resp = tw.buf.Bytes()
	}
	l.mu.Unlock()
	close(done)
}

// last is the last request to arrive, once its handler has returned.
func (l *exchangeLog) last(t *testing.T) seenExchange {
	t.Helper()
	l.mu.Lock()
	if len(l.seen) == 0 {
		l.mu.Unlock()
		t.Fatal("no upstream request")
	}
	done := l.seen[len(l.seen)-1].done
	l.mu.Unlock()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream handler did not return")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.seen) - 1; i >= 0; i-- {
		if l.seen[i].done == done {
			return l.seen[i]
		}
	}
	t.Fatal("the upstream log was reset")
	return seenExchange{}
}

func (l *exchangeLog) reset() { l.mu.Lock(); l.seen = nil; l.mu.Unlock() }
