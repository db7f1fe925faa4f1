//go:build unix

package pipenet_test

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/llmguard/llmguard/internal/pipenet"
)

// A connection to Refused's address is refused, and no listener can take
// its port while the test runs.
func TestRefused(t *testing.T) {
	addr := pipenet.Refused(t)
	c, err := net.Dial("tcp", addr)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dialling %s: %v, want connection refused", addr, err)
	}
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Errorf("a listener took %s", addr)
	}
}
