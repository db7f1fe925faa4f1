package mcpproxy

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cutTransport is an upstream's transport with a way to cut the connection
// it made. ClientSession.Close waits for the calls in flight, which a hung
// server never answers (and a flight may outlive its caller by RunFor):
// cutting closes the connection under the session, so every call in flight
// ends with an error at once and the session's Wait returns.
type cutTransport struct {
	mcp.Transport

	mu   sync.Mutex
	conn mcp.Connection
	cut  bool
	// ended is closed when reading the connection failed: it is over (a
	// crash, an exit, a cut). A Streamable HTTP connection never ends so:
	// each request fails on its own.
	ended     chan struct{}
	endedOnce sync.Once
}

// Dead reports whether the connection is over.
func (t *cutTransport) Dead() bool {
	select {
	case <-t.ended:
		return true
	default:
		return false
	}
}

// watchedConn is a connection that tells its transport when it is over.
type watchedConn struct {
	mcp.Connection
	t *cutTransport
}

func (c *watchedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil && ctx.Err() == nil {
		c.t.endedOnce.Do(func() { close(c.t.ended) })
	}
	return m, err
}

func (t *cutTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cut {
		c.Close()
	}
	t.conn = c
	return &watchedConn{Connection: c, t: t}, nil
}

// Cut closes the connection (now, or as soon as it is made).
func (t *cutTransport) Cut() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cut = true
	if t.conn != nil {
		t.conn.Close()
	}
}
