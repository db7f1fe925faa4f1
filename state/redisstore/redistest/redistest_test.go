package redistest

import "testing"

// A server whose port another server took first does not start: the other
// one answering PING there is not taken for it.
func TestStartOnATakenPort(t *testing.T) {
	first := Start(t)
	second := &Server{t: t, bin: first.bin, dir: t.TempDir(), port: first.port}
	if err := second.start(); err == nil {
		second.Kill()
		t.Fatalf("a second server started on port %d, which the first holds", first.port)
	}
	if err := Ping(first.Addr()); err != nil {
		t.Errorf("the first server: %v", err)
	}
}
