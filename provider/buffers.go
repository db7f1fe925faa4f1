package provider

import (
	"context"
	"io"
	"net"
)

// buffersBody is a request body that can write itself to a connection in
// one go: a relayed request's slices of its client's buffer (issue 19),
// which the transport would otherwise copy 32 KB at a time through a
// buffer of its own before the kernel copies them again.
type buffersBody interface {
	// WriteBuffers writes at most n bytes of the body to w.
	WriteBuffers(w io.Writer, n int64) (int64, error)
}

// dialBuffers is d.DialContext whose TCP connections write a buffersBody
// with WriteBuffers (one writev of the slices) when the transport sends
// one over plain HTTP. Over TLS the transport encrypts what it reads from
// the body, as ever.
func dialBuffers(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			return buffersConn{tc}, nil
		}
		return c, err
	}
}

// buffersConn is a TCP connection that takes a buffersBody as it is. The
// transport copies a request body to its connection with ReadFrom, the
// body behind an io.LimitedReader of its Content-Length.
type buffersConn struct{ *net.TCPConn }

func (c buffersConn) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if b, ok := lr.R.(buffersBody); ok {
			n, err := b.WriteBuffers(c.TCPConn, lr.N)
			lr.N -= n
			return n, err
		}
	}
	return c.TCPConn.ReadFrom(r)
}
