//go:build !unix

package pipenet

import (
	"net"
	"testing"
)

// Refused returns the address, 127.0.0.1:port, of a TCP port where a
// connection is refused: one that was free a moment ago (on unix, a port
// held for the test; here, listened on and closed, which another process
// may take before the test dials it).
func Refused(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
