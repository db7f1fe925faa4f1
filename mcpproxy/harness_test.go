package mcpproxy

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmguard/llmguard/internal/syncbuf"
	"github.com/llmguard/llmguard/mcpproxy/internal/fakeupstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fake is an in-process fake upstream reached through in-memory pipes:
// each Dial is a fresh connection (a restart), and a crash cuts the current
// one at once, as a process's exit does. (ServerSession.Close would wait for
// the calls in flight, the crashing one included, to end first.)
type fake struct {
	*fakeupstream.Fake
	mu    sync.Mutex
	cur   net.Conn // the server's end of the current connection
	dials int
	down  bool // Dial fails (the server can't start)
}

func newFake(name string) *fake {
	f := &fake{}
	f.Fake = fakeupstream.New(&fakeupstream.Options{Name: name, Crash: func() {
		f.mu.Lock()
		conn := f.cur
		f.mu.Unlock()
		conn.Close()
	}})
	return f
}

func (f *fake) dial(ctx context.Context) (mcp.Transport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dials++
	if f.down {
		return nil, io.ErrUnexpectedEOF
	}
	client, server := net.Pipe()
	if _, err := f.Server.Connect(context.Background(), &mcp.IOTransport{Reader: server, Writer: server}, nil); err != nil {
		return nil, err
	}
	f.cur = server
	return &mcp.IOTransport{Reader: client, Writer: client}, nil
}

func (f *fake) upstream(name string) Upstream { return Upstream{Name: name, Dial: f.dial} }

// logBuffer collects the proxy's log lines.
type logBuffer = syncbuf.Buffer

type stack struct {
	proxy  *Proxy
	client *mcp.ClientSession
	log    *logBuffer
	prog   *progressLog
}

// progressLog records the progress notifications the client receives.
type progressLog struct {
	mu   sync.Mutex
	msgs []string
}

func (p *progressLog) add(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, req.Params.Message)
}

func (p *progressLog) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.msgs...)
}

// newStack starts a proxy of ups on a fresh server and connects a client
// to it; everything stops when the test ends.
func newStack(t *testing.T, cfg *Config) *stack {
	t.Helper()
	st := &stack{log: &logBuffer{}, prog: &progressLog{}}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(st.log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(1, 2))
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "llmguard-test", Version: "1"}, nil)
	p.Start(context.Background(), srv)
	ct, stt := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), stt, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{ProgressNotificationHandler: st.prog.add})
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close(); p.Close() })
	st.proxy, st.client = p, cs
	return st
}

// call calls tool and returns its one text and isError.
func (st *stack) call(t *testing.T, ctx context.Context, tool string, args map[string]any, meta mcp.Meta) (string, bool) {
	t.Helper()
	res, err := st.client.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// oneLine fails unless s is exactly one non-empty line.
func oneLine(t *testing.T, s string) {
	t.Helper()
	if s == "" || strings.ContainsAny(s, "\r\n") {
		t.Errorf("not one line: %q", s)
	}
}

var _ = time.Second
