// Package pipenet serves HTTP over an in-memory network, for tests that run
// in a testing/synctest bubble: a goroutine blocked on a loopback socket is
// not durably blocked, so it would stop the bubble's clock, while one
// blocked on a pipe is. The HTTP is the real net/http client and server;
// only the sockets are pipes (net.Pipe). It also works outside a bubble.
//
//	synctest.Test(t, func(t *testing.T) {
//		srv := pipenet.NewServer(handler)
//		defer srv.Close()
//		res, err := srv.Client().Get(srv.URL + "/healthz")
//		...
//	})
package pipenet

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// Server is an HTTP server on a network of its own, as httptest.Server is
// on loopback. Its connections say they are TCP from and to 127.0.0.1.
// Its methods are safe for concurrent use.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1 with a port of its
	// own (nothing listens there): through Client that address reaches the
	// server, and any other is dialled as usual.
	URL string

	n      *listener
	srv    *http.Server
	tr     *http.Transport
	client *http.Client
	once   sync.Once
}

// NewServer starts serving h. Close it before the bubble (or test) ends.
func NewServer(h http.Handler) *Server {
	n := &listener{conns: make(chan net.Conn), closed: make(chan struct{}),
		addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(lastPort.Add(1))}}
	s := &Server{URL: "http://" + n.addr.String(), n: n, srv: &http.Server{Handler: h}}
	var d net.Dialer
	s.tr = &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == n.addr.String() {
			return n.dial(ctx)
		}
		return d.DialContext(ctx, network, addr)
	}}
	s.client = &http.Client{Transport: s.tr}
	go s.srv.Serve(n)
	return s
}

// Client returns a client whose requests to URL go to the server.
func (s *Server) Client() *http.Client { return s.client }

// Dial opens a raw connection to the server (for requests a client would
// clean up, such as a path with "..").
func (s *Server) Dial() (net.Conn, error) { return s.n.dial(context.Background()) }

// Close stops the server, its connections and the client's idle ones.
func (s *Server) Close() {
	s.once.Do(func() {
		s.srv.Close()
		s.tr.CloseIdleConnections()
		s.n.Close()
	})
}

// lastPort is the port of the last Server (ports from 1: low ports no
// test server listens on).
var lastPort atomic.Int32

// listener hands the server the far end of each pipe a client dials.
type listener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	addr   *net.TCPAddr
	mu     sync.Mutex
	port   int // the last client port handed out
}

func (n *listener) Accept() (net.Conn, error) {
	select {
	case c := <-n.conns:
		return c, nil
	case <-n.closed:
		return nil, net.ErrClosed
	}
}

func (n *listener) Close() error { n.once.Do(func() { close(n.closed) }); return nil }

func (n *listener) Addr() net.Addr { return n.addr }

func (n *listener) dial(ctx context.Context) (net.Conn, error) {
	n.mu.Lock()
	n.port++
	cli := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000 + n.port%20000}
	n.mu.Unlock()
	srv := n.Addr()
	cp, sp := net.Pipe()
	c, s := &conn{cp, cli, srv}, &conn{sp, srv, cli}
	select {
	case n.conns <- s:
		return c, nil
	case <-n.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// conn is one end of a pipe with TCP addresses.
type conn struct {
	net.Conn
	local, remote net.Addr
}

func (c *conn) LocalAddr() net.Addr  { return c.local }
func (c *conn) RemoteAddr() net.Addr { return c.remote }
