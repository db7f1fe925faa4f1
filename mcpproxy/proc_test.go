package mcpproxy

import (
	"context"
	"io"
	"os"
	"os/exec"
	"testing"
)

// TestProcOutputAfterExit: what a stdio server wrote before it exited is
// read after its exit, then the end of its output (io.EOF), never an error
// of the pipe closed under the reader ("read |0: file already closed",
// which made a crash during a call read as a failure of its own).
func TestProcOutputAfterExit(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	p, tr, err := startProc(context.Background(), &Upstream{Command: sh, Args: []string{"-c", "echo last words; exit 3"}}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	<-p.exited // exec's Wait has returned
	out, err := io.ReadAll(tr.Reader)
	if err != nil || string(out) != "last words\n" {
		t.Errorf("read after the exit: %q, %v; want \"last words\\n\" and the end of the output", out, err)
	}
	if p.status != "exit status 3" {
		t.Errorf("status %q, want exit status 3", p.status)
	}
}

// TestConnLostPipes: the errors of a write to a stdio server's stdin once
// the server is gone say the connection was lost.
func TestConnLostPipes(t *testing.T) {
	write := func(closeReader bool) error {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if closeReader {
			r.Close() // the process is gone: EPIPE
		} else {
			w.Close() // exec closed the pipe once the process exited
		}
		_, err = w.Write([]byte("{}\n"))
		w.Close()
		return err
	}
	for name, err := range map[string]error{"the server exited": write(true), "the pipe was closed": write(false)} {
		if err == nil || !connLost(err) {
			t.Errorf("%s: connLost(%v) = false, want true", name, err)
		}
	}
}
