package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// terminateAfter is how long a stdio server has to exit once its stdin is
// closed before it is killed.
const terminateAfter = 2 * time.Second

// proc is one run of a stdio server's command, owned by llmguard: its
// stdin and stdout carry JSON-RPC, cmd.Wait runs on a goroutine of its
// own, and close ends it (stdin closed, then killed after terminateAfter).
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{}
	status string // how it exited ("exit status 1", "signal: killed"), set before exited closes

	closeOnce sync.Once
}

// startProc starts u's command with stderr going to w.
func startProc(ctx context.Context, u *Upstream, w io.Writer) (*proc, *mcp.IOTransport, error) {
	cmd := exec.CommandContext(ctx, u.Command, u.Args...)
	cmd.Dir = u.Dir
	cmd.Env = os.Environ()
	keys := make([]string, 0, len(u.Env))
	for k := range u.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+u.Env[k])
	}
	cmd.Stderr = w
	cmd.WaitDelay = terminateAfter
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	// Stdout is a pipe of llmguard's own, not cmd.StdoutPipe: Wait closes
	// the pipes exec made as soon as the process exits, under a reader that
	// has not yet read what the server wrote last (its Read then fails with
	// "file already closed" instead of reaching the end of the output).
	stdout, pw, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return nil, nil, err
	}
	cmd.Stdout = pw
	err = cmd.Start()
	pw.Close() // the child has its own copy
	if err != nil {
		stdout.Close()
		return nil, nil, err
	}
	p := &proc{cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			p.status = ee.ProcessState.String()
		case err != nil:
			p.status = err.Error()
		default:
			p.status = "exit status 0"
		}
		close(p.exited)
		// A process the server left running may hold its stdout open: the
		// reader has terminateAfter to reach the end of the output.
		time.AfterFunc(terminateAfter, func() { stdout.Close() })
	}()
	return p, &mcp.IOTransport{Reader: stdout, Writer: p}, nil
}

func (p *proc) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close ends the run: stdin is closed (a well-behaved server exits), and
// a server still running terminateAfter later is killed. It returns once
// the process has exited.
func (p *proc) Close() error {
	p.closeOnce.Do(func() {
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(terminateAfter):
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	<-p.exited
	return nil
}

// exitStatus waits up to d for the process to exit and says how it did
// ("" if it has not).
func (p *proc) exitStatus(d time.Duration) string {
	select {
	case <-p.exited:
		return p.status
	case <-time.After(d):
		return ""
	}
}

func (p *proc) String() string { return fmt.Sprintf("pid %d", p.cmd.Process.Pid) }
