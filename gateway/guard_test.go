package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmguard/llmguard/internal/pipenet"
)

// send makes one request to the stack's gateway with the given headers
// ("Host" sets the Host the request names).
func (st *stack) send(t *testing.T, method, path, body string, hdr map[string]string) reply {
	t.Helper()
	var pairs []string
	for k, v := range hdr {
		pairs = append(pairs, k, v)
	}
	res := pipenet.Do(t, st.gw.Client(), method, st.gw.URL+path, body, pairs...)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{res.StatusCode, res.Header, b}
}

// TestWebPageCannotDrive: a page the user opens may send requests to the
// gateway on 127.0.0.1 (CORS "simple" requests need no preflight, DNS
// rebinding makes a foreign name resolve to loopback). The gateway refuses
// every one of them with a JSON error in the path's dialect, and admits
// loopback pages and the origins it was told to allow.
func TestWebPageCannotDrive(t *testing.T) {
	st := newStack(t, &Options{AllowedOrigins: []string{"https://app.example"}})
	json := "application/json"
	tests := []struct {
		name, method, path, body string
		hdr                      map[string]string
		status                   int
		errType                  string // the dialect's error type, "" for success
	}{
		{"text/plain simple request", "POST", "/v1/chat/completions", oaBody("oai", false, ""),
			map[string]string{"Content-Type": "text/plain;charset=UTF-8"}, 415, "invalid_request_error"},
		{"form simple request", "POST", "/v1/messages", anBody("ant", false, ""),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "invalid_request_error"},
		{"multipart simple request", "POST", "/v1/messages/count_tokens", anBody("ant", false, ""),
			map[string]string{"Content-Type": "multipart/form-data; boundary=b"}, 415, "invalid_request_error"},
		{"foreign origin", "POST", "/v1/chat/completions", oaBody("oai", false, ""),
			map[string]string{"Content-Type": json, "Origin": "https://evil.example"}, 403, "permission_error"},
		{"foreign origin, anthropic", "POST", "/v1/messages", anBody("ant", false, ""),
			map[string]string{"Content-Type": json, "Origin": "https://evil.example"}, 403, "permission_error"},
		{"null origin", "POST", "/v1/chat/completions", oaBody("oai", false, ""),
			map[string]string{"Content-Type": json, "Origin": "null"}, 403, "permission_error"},
		{"rebinding host", "POST", "/v1/chat/completions", oaBody("oai", false, ""),
			map[string]string{"Content-Type": json, "Host": "evil.example:8080"}, 403, "permission_error"},
		{"rebinding host reads models", "GET", "/v1/models", "",
			map[string]string{"Host": "evil.example:8080"}, 403, "permission_error"},
		{"rebinding host reads status", "GET", "/status", "",
			map[string]string{"Host": "evil.example:8080"}, 403, ""},
		{"loopback page", "POST", "/v1/chat/completions", oaBody("oai", false, ""),
			map[string]string{"Content-Type": json, "Origin": "http://localhost:5173"}, 200, ""},
		{"allowed origin", "POST", "/v1/messages", anBody("ant", false, ""),
			map[string]string{"Content-Type": json, "Origin": "https://app.example"}, 200, ""},
		{"localhost host", "POST", "/v1/messages", anBody("ant", false, ""),
			map[string]string{"Content-Type": "application/json; charset=utf-8", "Host": "localhost:8080"}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(st.mock.Requests())
			r := st.send(t, tt.method, tt.path, tt.body, tt.hdr)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want JSON: %s", ct, r.body)
			}
			m := decodeJSON(t, r.body)
			if tt.errType != "" {
				typ := dig(m, "error", "type")
				if typ != tt.errType {
					t.Errorf("error type %v, want %s: %s", typ, tt.errType, r.body)
				}
			}
			if tt.status >= 400 {
				if n := len(st.mock.Requests()); n != before {
					t.Errorf("a refused request reached the upstream (%d calls)", n-before)
				}
				if r.header.Get("Access-Control-Allow-Origin") != "" {
					t.Errorf("refused request lets the page read the answer: %q", r.header.Get("Access-Control-Allow-Origin"))
				}
			}
			if o := tt.hdr["Origin"]; tt.status == 200 && o != "" && r.header.Get("Access-Control-Allow-Origin") != o {
				t.Errorf("admitted page gets Access-Control-Allow-Origin %q, want %q", r.header.Get("Access-Control-Allow-Origin"), o)
			}
		})
	}
}

// TestPreflight: a page on an admitted origin can call the gateway with
// its JSON body and key (the browser asks first); others can't.
func TestPreflight(t *testing.T) {
	st := newStack(t, &Options{AllowedOrigins: []string{"https://app.example"}, Keys: []string{"gw-key-1"}})
	for origin, want := range map[string]int{"https://app.example": 204, "https://evil.example": 403} {
		r := st.send(t, "OPTIONS", "/v1/chat/completions", "", map[string]string{"Origin": origin,
			"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"})
		if r.status != want {
			t.Errorf("preflight from %s: status %d, want %d: %s", origin, r.status, want, r.body)
			continue
		}
		if want == 204 && (r.header.Get("Access-Control-Allow-Origin") != origin ||
			!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "authorization")) {
			t.Errorf("preflight headers %v", r.header)
		}
	}
}

// TestStatusNeedsKey: /status shows last errors, breakers and other
// clients' model names; with gateway keys set it needs one. /healthz and
// /readyz stay open for load balancers.
func TestStatusNeedsKey(t *testing.T) {
	st := newStack(t, &Options{Keys: []string{"gw-key-1"}})
	for _, tt := range []struct {
		path   string
		hdr    map[string]string
		status int
	}{
		{"/status", nil, 401},
		{"/status", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"/status", map[string]string{"Authorization": "bearer gw-key-1"}, 200},
		{"/status", map[string]string{"x-api-key": "gw-key-1"}, 200},
		{"/healthz", nil, 200},
		{"/readyz", nil, 200},
	} {
		r := st.send(t, "GET", tt.path, "", tt.hdr)
		if r.status != tt.status {
			t.Errorf("GET %s %v: status %d, want %d: %s", tt.path, tt.hdr, r.status, tt.status, r.body)
		}
		decodeJSON(t, r.body)
	}
	// The same holds on a separate admin listener.
	srv := st.srv
	admin := httptestServer(t, srv.AdminHandler())
	res, err := http.Get(admin + "/status")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Errorf("admin listener /status without key: %d, want 401", res.StatusCode)
	}
}

func httptestServer(t *testing.T, h http.Handler) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}
