package pipenet

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Do sends one request of method to url through c, with body ("" sends
// none) and the headers hdr (name, value pairs, set in order, so a later
// one replaces an earlier one; "Host" sets the Host the request names,
// which the client sends instead of any Host header), and returns the
// answer, its body unread.
// A request that cannot be made or sent fails tb. It is the tests' one
// request builder, for any server (a Server's Client, or
// http.DefaultClient for one on loopback); safe for concurrent use.
func Do(tb testing.TB, c *http.Client, method, url, body string, hdr ...string) *http.Response {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if http.CanonicalHeaderKey(hdr[i]) == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}
