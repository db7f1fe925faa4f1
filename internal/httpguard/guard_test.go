package httpguard

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// serve runs g in front of an "ok" handler on 127.0.0.1.
func serve(t *testing.T, p *Policy) *httptest.Server {
	t.Helper()
	g, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.Preflight(w, r, "POST, OPTIONS") {
			return
		}
		ref := g.Check(r)
		if ref == nil && r.Method == http.MethodPost {
			ref = CheckJSON(r)
		}
		if ref != nil {
			http.Error(w, ref.Message, ref.Status)
			return
		}
		g.AllowOrigin(w.Header(), r)
		io.WriteString(w, "ok")
	}))
	t.Cleanup(ts.Close)
	return ts
}

func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func TestCheckSource(t *testing.T) {
	ts := serve(t, &Policy{AllowedOrigins: []string{"https://App.Example/"}, AllowedHosts: []string{"gw.internal"}})
	port := ts.Listener.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		name, host, origin string
		want               int
	}{
		{"no origin", "", "", 200},
		{"localhost host", "localhost:8080", "", 200},
		{"ipv6 loopback host", "[::1]:8080", "", 200},
		{"allowed host", "GW.internal:8080", "", 200},
		{"rebinding host", "evil.example:8080", "", 403},
		{"rebinding host, loopback-looking", "localhost.evil.example", "", 403},
		{"loopback origin", "", "http://localhost:3000", 200},
		{"loopback ip origin", "", "http://127.0.0.1:" + strconv.Itoa(port), 200},
		{"ipv6 loopback origin", "", "http://[::1]:3000", 200},
		{"allowed origin, case and slash", "", "https://app.example", 200},
		{"foreign origin", "", "https://evil.example", 403},
		{"lookalike origin", "", "http://localhost.evil.example", 403},
		{"null origin", "", "null", 403},
		{"file origin", "", "file://", 403},
		{"allowed origin, other scheme", "", "http://app.example", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", ts.URL, nil)
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, body := do(t, req)
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d (%s)", resp.StatusCode, tc.want, body)
			}
			if tc.want == 200 && tc.origin != "" && resp.Header.Get("Access-Control-Allow-Origin") != tc.origin {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", resp.Header.Get("Access-Control-Allow-Origin"), tc.origin)
			}
			if tc.want != 200 && resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("a refused request got Access-Control-Allow-Origin %q", resp.Header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
}

func TestCheckKey(t *testing.T) {
	ts := serve(t, &Policy{Keys: []string{"gw-key-1", "gw-key-2"}, KeyName: "gateway key"})
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"none", nil, 401},
		{"bearer", map[string]string{"Authorization": "Bearer gw-key-1"}, 200},
		{"lowercase bearer", map[string]string{"Authorization": "bearer gw-key-2"}, 200},
		{"uppercase bearer, spaces", map[string]string{"Authorization": "BEARER   gw-key-1 "}, 200},
		{"x-api-key", map[string]string{"x-api-key": "gw-key-2"}, 200},
		{"wrong", map[string]string{"Authorization": "Bearer gw-key-3"}, 401},
		{"basic scheme", map[string]string{"Authorization": "Basic gw-key-1"}, 401},
		{"bare key", map[string]string{"Authorization": "gw-key-1"}, 401},
		{"prefix of a key", map[string]string{"x-api-key": "gw-key"}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", ts.URL, nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, body := do(t, req)
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d (%s)", resp.StatusCode, tc.want, body)
			}
			if tc.want == 401 && !strings.Contains(body, "gateway key") {
				t.Errorf("refusal %q does not name the gateway key", body)
			}
		})
	}
}

func TestCheckJSON(t *testing.T) {
	ts := serve(t, nil)
	for _, tc := range []struct {
		ct   string
		want int
	}{
		{"application/json", 200},
		{"application/json; charset=utf-8", 200},
		{"Application/JSON", 200},
		{"application/vnd.api+json", 200},
		{"", 200},
		{"text/plain", 415},
		{"text/plain;charset=UTF-8", 415},
		{"application/x-www-form-urlencoded", 415},
		{"multipart/form-data; boundary=x", 415},
		{"application/jsonx", 415},
		{"garbage;;", 415},
	} {
		t.Run(tc.ct, func(t *testing.T) {
			req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(`{}`))
			if tc.ct != "" {
				req.Header.Set("Content-Type", tc.ct)
			} else {
				req.Header["Content-Type"] = nil
			}
			resp, body := do(t, req)
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d (%s)", resp.StatusCode, tc.want, body)
			}
		})
	}
}

func TestPreflight(t *testing.T) {
	ts := serve(t, &Policy{AllowedOrigins: []string{"https://app.example"}, Keys: []string{"k-123456"}})
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"https://app.example", 204},
		{"http://localhost:5173", 204},
		{"https://evil.example", 403},
	} {
		t.Run(tc.origin, func(t *testing.T) {
			req, _ := http.NewRequest("OPTIONS", ts.URL, nil)
			req.Header.Set("Origin", tc.origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
			resp, body := do(t, req)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, tc.want, body)
			}
			if tc.want != 204 {
				return
			}
			for k, v := range map[string]string{"Access-Control-Allow-Origin": tc.origin,
				"Access-Control-Allow-Methods": "POST, OPTIONS", "Access-Control-Allow-Headers": "authorization, content-type"} {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	for _, p := range []*Policy{
		{Keys: []string{" "}},
		{AllowedOrigins: []string{"app.example"}},
		{AllowedOrigins: []string{"https://app.example/path"}},
		{AllowedOrigins: []string{"*"}},
	} {
		if _, err := New(p); err == nil {
			t.Errorf("New(%+v) = nil error", p)
		}
	}
}
