//go:build unix

package pipenet

import (
	"strconv"
	"syscall"
	"testing"
)

// Refused returns the address, 127.0.0.1:port, of a TCP port where a
// connection is refused for as long as tb runs: a socket bound to it that
// never listens, so no one else can take the port meanwhile (a port found
// by listening and closing again is free for anyone to take before the
// test dials it). For tests of a connection refused.
func Refused(tb testing.TB) string {
	tb.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		tb.Fatal(err)
	}
	syscall.CloseOnExec(fd)
	tb.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		tb.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		tb.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
}
