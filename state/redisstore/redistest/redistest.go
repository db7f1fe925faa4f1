// Package redistest starts real redis-server processes on loopback for
// tests: one server, or a Cluster of several. A test that needs one and
// finds no redis-server (or valkey-server) on PATH skips with a message,
// and fails under CI=true.
//
//	srv := redistest.Start(t)
//	st, err := redisstore.New(ctx, &redisstore.Options{URL: srv.URL()})
package redistest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary returns the path of redis-server (or valkey-server) on PATH. When
// there is none it skips t, or fails it under CI=true.
func Binary(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"redis-server", "valkey-server"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "redis-server is not on PATH (Debian: apt-get install redis-server)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Server is one redis-server process started by a test, listening on
// 127.0.0.1 at a free port, with no persistence. It is stopped when the
// test ends. Its methods are safe for concurrent use.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	args []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
}

// Start starts a redis-server with extra command-line arguments (for
// example "--cluster-enabled", "yes").
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	return startServer(t, false, args)
}

// startServer is Start; with bus, the server also gets a free cluster bus
// port (--cluster-port). redis-server takes its ports as numbers on its
// command line and cannot be handed a listener, so a port is chosen free
// (freePort) and may be taken by another process before the server binds
// it: the server then exits, or another server answers there (start tells
// them apart), and the next try chooses other ports.
func startServer(t testing.TB, bus bool, args []string) *Server {
	t.Helper()
	s := &Server{t: t, bin: Binary(t), dir: t.TempDir()}
	var err error
	for range 5 {
		if s.port, err = freePort(); err != nil {
			continue
		}
		s.args = args
		if bus {
			var p int
			if p, err = freePort(); err != nil {
				continue
			}
			s.args = append(slices.Clip(args), "--cluster-port", strconv.Itoa(p))
		}
		if err = s.start(); err == nil {
			t.Cleanup(s.Kill)
			return s
		}
	}
	t.Fatalf("starting redis-server: %v", err)
	return nil
}

// Addr is host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// URL is redis://host:port.
func (s *Server) URL() string { return "redis://" + s.Addr() }

// Port is the port it listens on.
func (s *Server) Port() int { return s.port }

func (s *Server) start() error {
	args := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(s.port), "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--protected-mode", "no", "--enable-debug-command", "yes"}, s.args...)
	cmd := exec.Command(s.bin, args...)
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	var werr error
	go func() { werr = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("redis-server exited (%v): %s", werr, lastLine(out.String()))
		default:
		}
		if Ping(s.Addr()) == nil {
			if err := s.served(cmd.Process.Pid); err != nil {
				cmd.Process.Kill()
				<-exited
				return err
			}
			s.mu.Lock()
			s.cmd, s.exited = cmd, exited
			s.mu.Unlock()
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-exited
	return fmt.Errorf("redis-server on port %d did not answer within 10s: %s", s.port, lastLine(out.String()))
}

// served checks that the server answering at s's port is process pid,
// not another that took the port first.
func (s *Server) served(pid int) error {
	info, err := Command(s.Addr(), "INFO", "server")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			if v != strconv.Itoa(pid) {
				return fmt.Errorf("port %d is another server's (process %s)", s.port, v)
			}
			return nil
		}
	}
	return fmt.Errorf("INFO server at port %d names no process_id", s.port)
}

// Kill stops the server with SIGKILL (no shutdown, no save) and waits for
// it to exit. Killing a stopped server does nothing.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
	s.cmd = nil
}

// Restart starts a killed server again on the same port, empty.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	var err error
	for range 50 { // the port may linger for a moment
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("restarting redis-server on port %d: %v", s.port, err)
}

// Ping sends PING to addr over a fresh connection and checks for PONG,
// within a second.
func Ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// freePort is a port free a moment ago (see startServer).
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// cliPath finds redis-cli beside the server binary, or on PATH.
func cliPath(bin string) (string, error) {
	for _, name := range []string{"redis-cli", "valkey-cli"} {
		if p := filepath.Join(filepath.Dir(bin), name); fileExists(p) {
			return p, nil
		}
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no redis-cli beside %s", bin)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Command sends one command to addr over a fresh connection and returns
// its answer as text (a simple string, integer or bulk string; "" for
// nil), or the server's error, within ten seconds.
func Command(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case line == "":
		return "", fmt.Errorf("empty answer")
	case line[0] == '-':
		return "", fmt.Errorf("%s", line[1:])
	case line[0] == '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	default:
		return line[1:], nil
	}
}
