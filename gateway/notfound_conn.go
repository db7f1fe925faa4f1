package gateway

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/llmguard/llmguard/classify"
)

// net/http answers a request it cannot parse (headers over MaxHeaderBytes,
// a malformed request line, a missing Host, an unknown transfer encoding)
// itself, before any handler runs, with a text/plain body written straight
// to the connection. jsonListener rewrites exactly those answers into the
// gateway's JSON error in the dialect of the request's path, so a client
// SDK gets an error it can parse. A handler's response never matches: the
// server's own answer is one write of the status line followed directly
// by the fixed headers below, where a handler's carries a Date header.

// netHTTPErrorHeaders are the headers net/http's own error answers carry
// (net/http/server.go, conn.serve).
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// maxHead bounds the bytes of a request kept to find its path.
const maxHead = 512

type jsonListener struct{ net.Listener }

// jsonErrors returns ln whose connections get net/http's own error
// answers in JSON.
func jsonErrors(ln net.Listener) net.Listener { return jsonListener{ln} }

func (l jsonListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonConn{Conn: c}, nil
}

// jsonConn keeps the first bytes a client sent since the last answer (its
// request line) and rewrites net/http's own error answers. Reads and writes
// may run concurrently (net/http reads ahead while a handler writes).
type jsonConn struct {
	net.Conn
	mu    sync.Mutex
	head  []byte
	fresh bool // an answer went out: the next read starts a request
}

func (c *jsonConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		if c.fresh {
			c.head, c.fresh = c.head[:0], false
		}
		if k := min(n, maxHead-len(c.head)); k > 0 {
			c.head = append(c.head, p[:k]...)
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *jsonConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.fresh = true
	var out []byte
	if isNetHTTPError(p) {
		out = rewriteNetHTTPError(p, c.head)
	}
	c.mu.Unlock()
	if out == nil {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func isNetHTTPError(p []byte) bool {
	if !bytes.HasPrefix(p, []byte("HTTP/1.1 ")) {
		return false
	}
	eol := bytes.IndexByte(p, '\r')
	return eol > 0 && bytes.HasPrefix(p[eol:], []byte(netHTTPErrorHeaders))
}

// rewriteNetHTTPError turns one of net/http's own answers into the same
// status with a JSON body in the dialect of the request in head.
func rewriteNetHTTPError(p, head []byte) []byte {
	eol := bytes.IndexByte(p, '\r')
	statusLine := p[len("HTTP/1.1 "):eol]
	code, err := strconv.Atoi(string(statusLine[:min(3, len(statusLine))]))
	if err != nil || code < 400 {
		return nil
	}
	text := string(p[eol+len(netHTTPErrorHeaders):])
	var e *apiError
	switch code {
	case http.StatusRequestHeaderFieldsTooLarge:
		e = &apiError{status: code, kind: kindRequestTooLarge, retry: "false",
			message: "request headers too large: the gateway accepts at most " + strconv.Itoa(http.DefaultMaxHeaderBytes) + " bytes of headers"}
	case http.StatusNotImplemented:
		e = &apiError{status: code, kind: kindInvalidRequest, retry: "false", message: "unsupported transfer encoding"}
	default:
		msg := "malformed HTTP request"
		if _, why, ok := strings.Cut(text, ": "); ok {
			msg += ": " + classify.Line(why) // "400 Bad Request: missing required Host header"
		}
		e = &apiError{status: code, kind: kindInvalidRequest, retry: "false", message: msg}
	}
	method, target := requestLine(head)
	d := pathDialect(target, nil)
	if bytes.Contains(bytes.ToLower(head), []byte("\nanthropic-version:")) {
		d = DialectAnthropic
	}
	if method != "" && target != "" && code != http.StatusRequestHeaderFieldsTooLarge {
		e.message += " (" + method + " " + target + ")"
	}
	var body []byte
	if d == DialectAnthropic {
		body = appendAnthropicError(nil, e)
	} else {
		body = appendOpenAIError(nil, e)
	}
	out := make([]byte, 0, len(body)+160)
	out = append(out, "HTTP/1.1 "...)
	out = append(out, statusLine...)
	out = append(out, "\r\nContent-Type: application/json\r\nConnection: close\r\nX-Should-Retry: false\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(body)), 10)
	out = append(out, "\r\n\r\n"...)
	return append(out, body...)
}

// requestLine returns the method and path of the request line at the start
// of head ("" when it is not one).
func requestLine(head []byte) (method, target string) {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 2 || len(f[1]) == 0 || f[1][0] != '/' {
		return "", ""
	}
	t := f[1]
	if i := bytes.IndexByte(t, '?'); i >= 0 {
		t = t[:i]
	}
	if len(t) > 200 {
		t = t[:200]
	}
	return string(f[0][:min(len(f[0]), 16)]), string(t)
}
