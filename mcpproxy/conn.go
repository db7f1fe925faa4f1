package mcpproxy

import (
	"context"
	"sync"

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
	return c, nil
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
