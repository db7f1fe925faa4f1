package overhead

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"
)

// This file: the proxy and the gateway each run in a process of their own
// (a child), so that what each spends — CPU time, allocations, peak RSS —
// is its own and not the load generator's or the upstream's. The parent
// keeps the client and the upstream, and reads a child's counters from
// its stats listener before and after each phase.

// ChildEnv is set in a child's environment. A test binary whose tests run
// a bench checks it in TestMain and, when set, runs its arguments (the
// CLI's "bench child ...") instead of its tests.
const ChildEnv = "LLMGUARD_BENCH_CHILD"

// Spawn returns the command that starts a child with args (see
// ServeChild); the parent connects its standard input and output.
type Spawn func(args []string) *exec.Cmd

// SpawnSelf starts this executable as "EXE bench child ARGS", as the
// llmguard binary runs it, with ChildEnv set.
func SpawnSelf(args []string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cmd := exec.Command(exe, append([]string{"bench", "child"}, args...)...)
	cmd.Env = append(os.Environ(), ChildEnv+"=1")
	return cmd
}

// childStats is what a child reports of itself.
type childStats struct {
	CPU        int64  `json:"cpu_ns"`
	Allocs     uint64 `json:"allocs"`
	AllocBytes uint64 `json:"alloc_bytes"`
	PeakRSS    uint64 `json:"peak_rss"`
	RSS        uint64 `json:"rss"`
}

// ServeChild is a child: with args --path proxy|gateway --upstream URL it
// serves that path in front of the upstream on a loopback listener and
// its counters on another (GET /stats; ?gc=1 collects garbage first and
// starts the peak RSS count again),
// writes the two URLs on one line to stdout, and serves until stdin ends
// (the parent closed it or died) or ctx is done.
func ServeChild(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench child", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	which := fs.String("path", "", "proxy or gateway")
	upstream := fs.String("upstream", "", "the upstream's base URL (loopback)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u, err := url.Parse(*upstream)
	if err != nil || u.Scheme != "http" || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost") {
		return fmt.Errorf("bench child: --upstream %q: want http://127.0.0.1:PORT", *upstream)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _, _ = io.Copy(io.Discard, stdin); cancel() }()
	ln, err := loopback()
	if err != nil {
		return err
	}
	sl, err := loopback()
	if err != nil {
		ln.Close()
		return err
	}
	stats := &http.Server{Handler: http.HandlerFunc(serveStats), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = stats.Serve(sl) }()
	defer stats.Close()
	var serve func() error
	switch *which {
	case "proxy":
		rp := &httputil.ReverseProxy{Transport: proxyTransport(), Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			if r.Out.Body != nil && r.Out.Body != http.NoBody {
				r.Out.Body = eofAfterClose{r.Out.Body}
			}
		}}
		srv := &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
		go func() { <-ctx.Done(); srv.Close() }()
		serve = func() error { return ignoreClosed(srv.Serve(ln)) }
	case "gateway":
		gw, err := newGateway(*upstream)
		if err != nil {
			ln.Close()
			return err
		}
		serve = func() error { return gw.Run(ctx, ln, nil) }
	default:
		ln.Close()
		return fmt.Errorf("bench child: --path %q: want proxy or gateway", *which)
	}
	if _, err := fmt.Fprintf(stdout, "http://%s http://%s\n", ln.Addr(), sl.Addr()); err != nil {
		ln.Close()
		return err
	}
	return serve()
}

// eofAfterClose is a proxied request body that reads as ended once the
// server closed it. Without it a zero-latency upstream breaks about one
// stream in a hundred through httputil.ReverseProxy (golang/go#40747):
// the upstream answers before the transport has made its last read of the
// request body, writing the answer's headers closes that body, the read
// fails and the transport drops the upstream connection mid-answer.
type eofAfterClose struct{ io.ReadCloser }

func (b eofAfterClose) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, http.ErrBodyReadAfterClose) {
		err = io.EOF
	}
	return n, err
}

func ignoreClosed(err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func serveStats(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("gc") != "" {
		debug.FreeOSMemory() // a GC, and the freed memory back to the system: the peak starts from what is live
		resetPeakRSS()
	}
	c := read()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(childStats{CPU: int64(c.cpu), Allocs: c.allocs, AllocBytes: c.allocBytes, PeakRSS: peakRSS(), RSS: residentRSS()})
}

// child is the parent's handle on a running child.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	base   string // where it serves its path
	stats  string
	stderr firstLine
	done   chan struct{}
}

// spawn starts a child serving p in front of upstream and waits (up to
// 30s) for its URLs.
func spawn(start Spawn, p path, upstream string) (*child, error) {
	name := map[path]string{proxy: "proxy", guard: "gateway"}[p]
	c := &child{cmd: start([]string{"--path", name, "--upstream", upstream}), done: make(chan struct{})}
	c.cmd.Stderr = &c.stderr
	stdin, err := c.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c.stdin = stdin
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the %s's process: %w", name, err)
	}
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- l
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var l string
	select {
	case l = <-line:
	case <-time.After(30 * time.Second):
	}
	urls := strings.Fields(l)
	if len(urls) != 2 || !strings.HasPrefix(urls[0], "http://127.0.0.1:") {
		c.close()
		return nil, fmt.Errorf("the %s's process did not start: %q %s", name, l, c.stderr.String())
	}
	c.base, c.stats = urls[0], urls[1]
	return c, nil
}

// read returns the child's counters, after a GC (and a new start of its
// peak RSS count) when gc is set.
func (c *child) read(gc bool) (counters, error) {
	u := c.stats + "/stats"
	if gc {
		u += "?gc=1"
	}
	res, err := http.Get(u)
	if err != nil {
		return counters{}, err
	}
	defer res.Body.Close()
	var s childStats
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil {
		return counters{}, err
	}
	return counters{cpu: time.Duration(s.CPU), allocs: s.Allocs, allocBytes: s.AllocBytes, peakRSS: s.PeakRSS, rss: s.RSS}, nil
}

// close ends the child's input, which ends it, and kills it if it is
// still running 5s later.
func (c *child) close() {
	c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}
