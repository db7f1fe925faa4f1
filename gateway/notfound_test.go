package gateway

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// errorDialect returns the dialect of an error body ("openai",
// "anthropic"), its type and message, or fails the test.
func errorDialect(t *testing.T, ct string, b []byte) (dialect, typ, msg string) {
	t.Helper()
	if !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q, want JSON; body %q", ct, b)
	}
	var v struct {
		Type  string `json:"type"`
		Error struct {
			Type    string  `json:"type"`
			Message string  `json:"message"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.Error.Message == "" {
		t.Fatalf("not a JSON error body: %q (%v)", b, err)
	}
	if v.Type == "error" {
		return DialectAnthropic, v.Error.Type, v.Error.Message
	}
	return DialectOpenAI, v.Error.Type, v.Error.Message
}

// Issue 10 item 5 and issue 11 item 9: every path and method the gateway
// does not serve gets a JSON error in the path's dialect, never net/http's
// text/plain "404 page not found".
func TestUnknownPathsAndMethodsAreJSON(t *testing.T) {
	st := newStack(t, nil)
	tests := []struct {
		method, path string
		hdr          []string
		status       int
		dialect, typ string
		allow        string
	}{
		{"GET", "/v1/nope", nil, 404, DialectOpenAI, "invalid_request_error", ""},
		{"POST", "/v1/files", nil, 404, DialectOpenAI, "invalid_request_error", ""},
		{"POST", "/v1/messages/batches", nil, 404, DialectAnthropic, "not_found_error", ""},
		{"GET", "/v1/files", []string{"anthropic-version", "2023-06-01"}, 404, DialectAnthropic, "not_found_error", ""},
		{"GET", "/", nil, 404, DialectOpenAI, "invalid_request_error", ""},
		{"GET", "//v1/models", nil, 404, DialectOpenAI, "invalid_request_error", ""},
		{"GET", "/v1/chat/completions/../models", nil, 404, DialectOpenAI, "invalid_request_error", ""},
		{"POST", "/healthz", nil, 405, DialectOpenAI, "invalid_request_error", "GET"},
		{"DELETE", "/status", nil, 405, DialectOpenAI, "invalid_request_error", "GET"},
		{"GET", "/v1/chat/completions", nil, 405, DialectOpenAI, "invalid_request_error", "POST"},
		{"PUT", "/v1/messages", nil, 405, DialectAnthropic, "invalid_request_error", "POST"},
		{"POST", "/v1/models", nil, 405, DialectOpenAI, "invalid_request_error", "GET"},
		{"GET", "/v1/models/nope", nil, 404, DialectOpenAI, "invalid_request_error", ""},
		{"GET", "/v1/models/nope", []string{"anthropic-version", "2023-06-01"}, 404, DialectAnthropic, "not_found_error", ""},
		{"GET", "/v1/models/someone/gpt-4o", nil, 404, DialectOpenAI, "invalid_request_error", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			// A raw request line, so the client does not clean the path.
			c, err := st.gw.Dial()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			req := tt.method + " " + tt.path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
			for i := 0; i+1 < len(tt.hdr); i += 2 {
				req += tt.hdr[i] + ": " + tt.hdr[i+1] + "\r\n"
			}
			if _, err := io.WriteString(c, req+"\r\n"); err != nil {
				t.Fatal(err)
			}
			res, b := readAnswer(t, c)
			if res.StatusCode != tt.status {
				t.Errorf("status %d, want %d; body %s", res.StatusCode, tt.status, b)
			}
			d, typ, msg := errorDialect(t, res.Header.Get("Content-Type"), b)
			if d != tt.dialect || typ != tt.typ {
				t.Errorf("error %s/%s, want %s/%s: %s", d, typ, tt.dialect, tt.typ, b)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("message is not one line: %q", msg)
			}
			if got := res.Header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow %q, want %q", got, tt.allow)
			}
		})
	}
}

// GET /v1/models/{id} answers a model the gateway serves (routes, their
// targets, provider/model of a configured provider), as the SDKs'
// models.retrieve expects.
func TestModelByID(t *testing.T) {
	st := newStack(t, nil)
	for _, id := range []string{"default", "oai", "openai/gpt-4o", "gpt-4o", "anthropic/claude-opus-4-5"} {
		res, err := st.gw.Client().Get(st.gw.URL + "/v1/models/" + id)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		m := decodeJSON(t, b)
		if res.StatusCode != 200 || m["id"] != id || m["object"] != "model" || m["type"] != "model" {
			t.Errorf("GET /v1/models/%s = %d %s", id, res.StatusCode, b)
		}
	}
}

// Issue 11 item 9: net/http's own answers (431 for huge headers, 400 for a
// malformed request, 501 for an unknown transfer encoding) are JSON in the
// path's dialect too.
func TestNetHTTPErrorsAreJSON(t *testing.T) {
	st := newStack(t, nil)
	addr, _ := runGateway(t, st)
	huge := "X-Big: " + strings.Repeat("a", http.DefaultMaxHeaderBytes+8192) + "\r\n"
	tests := []struct {
		name, raw string
		status    int
		dialect   string
	}{
		{"huge headers openai", "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + huge + "\r\n", 431, DialectOpenAI},
		{"huge headers anthropic", "POST /v1/messages HTTP/1.1\r\nHost: x\r\nAnthropic-Version: 2023-06-01\r\n" + huge + "\r\n", 431, DialectAnthropic},
		{"missing host", "POST /v1/messages HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 400, DialectAnthropic},
		{"bad header line", "GET /v1/models HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", 400, DialectOpenAI},
		{"unknown transfer encoding", "POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, DialectOpenAI},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			go io.WriteString(c, tt.raw) // the server may answer before it read everything
			res, b := readAnswer(t, c)
			if res.StatusCode != tt.status {
				t.Errorf("status %d, want %d: %s", res.StatusCode, tt.status, b)
			}
			d, _, msg := errorDialect(t, res.Header.Get("Content-Type"), b)
			if d != tt.dialect {
				t.Errorf("dialect %s, want %s: %s", d, tt.dialect, b)
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, "aaaa") {
				t.Errorf("message %q", msg)
			}
		})
	}
	// A normal request on the same listener is untouched.
	res, err := http.Get("http://" + addr + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("GET /v1/models = %d", res.StatusCode)
	}
}

// BenchmarkJSONErrorsListener measures what Run's listener wrapper costs a
// request (a tiny handler over loopback keep-alive, the listener plain and
// wrapped): the wrapper locks once per read and write and keeps the first
// bytes of each request.
func BenchmarkJSONErrorsListener(b *testing.B) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		writeJSON(w, 200, []byte(`{"ok":true}`))
	})
	for _, wrap := range []bool{false, true} {
		name := "plain"
		if wrap {
			name = "wrapped"
		}
		b.Run(name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			if wrap {
				ln = jsonErrors(ln)
			}
			srv := &http.Server{Handler: h}
			go srv.Serve(ln)
			defer srv.Close()
			url := "http://" + ln.Addr().String() + "/v1/chat/completions"
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			body := strings.Repeat("x", 512)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := c.Post(url, "application/json", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		})
	}
}

// readAnswer reads one HTTP answer from c, and its whole body.
func readAnswer(t *testing.T, c io.Reader) (*http.Response, []byte) {
	t.Helper()
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, b
}
