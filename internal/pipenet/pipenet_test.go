package pipenet_test

import (
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/internal/pipenet"
)

// A handler that takes a minute answers in virtual time.
func TestServerInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := pipenet.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Minute)
			io.WriteString(w, "late "+r.URL.Path)
		}))
		defer srv.Close()
		start := time.Now()
		res, err := srv.Client().Get(srv.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) != "late /x" || time.Since(start) != time.Minute {
			t.Errorf("got %q after %v, want %q after 1m", b, time.Since(start), "late /x")
		}
	})
}

// Raw connections reach the server too.
func TestDial(t *testing.T) {
	srv := pipenet.NewServer(http.NotFoundHandler())
	defer srv.Close()
	c, err := srv.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /a/../b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	b, _ := io.ReadAll(c)
	if len(b) < 12 || string(b[:12]) != "HTTP/1.1 404" {
		t.Errorf("reply %q", b)
	}
}

// Do sends the method, body, Host and headers (a later pair replacing an
// earlier one) through the client it is given.
func TestDo(t *testing.T) {
	srv := pipenet.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, r.Method+" "+r.Host+" "+r.Header.Get("X-A")+" "+r.Header.Get("X-B")+" "+string(b))
	}))
	defer srv.Close()
	for _, tt := range []struct{ method, body, want string }{
		{http.MethodPost, "hi", "POST gw.example 2 b hi"},
		{http.MethodGet, "", "GET gw.example 2 b "},
	} {
		res := pipenet.Do(t, srv.Client(), tt.method, srv.URL+"/", tt.body, "X-A", "1", "x-b", "b", "host", "gw.example", "X-A", "2", "dangling")
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) != tt.want {
			t.Errorf("%s: got %q, want %q", tt.method, b, tt.want)
		}
	}
}
