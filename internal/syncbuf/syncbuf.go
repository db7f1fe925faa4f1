// Package syncbuf is a bytes.Buffer that several goroutines may write to
// while a test reads it: the sink for a server's log, a command's stderr or
// a transport's wire dump that the test inspects as it runs.
//
//	var log syncbuf.Buffer
//	srv := run(slog.New(slog.NewJSONHandler(&log, nil)))
//	...
//	if !strings.Contains(log.String(), "listening") { ... }
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent use. The zero Buffer is
// empty and ready to use; it must not be copied after first use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
