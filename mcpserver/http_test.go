package mcpserver

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func TestHTTPHandlerGuards(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	srv := New(&Config{Logger: log})
	h, err := HTTPHandler(srv, &HTTPOptions{Token: "s3cret", AllowedOrigins: []string{"https://ok.example"}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	for _, tc := range []struct {
		name   string
		origin string
		auth   string
		want   int
	}{
		{"no token", "", "", http.StatusUnauthorized},
		{"wrong token", "", "Bearer nope", http.StatusUnauthorized},
		{"token, no origin", "", "Bearer s3cret", http.StatusOK},
		{"lowercase scheme", "", "bearer s3cret", http.StatusOK},
		{"uppercase scheme", "", "BEARER s3cret", http.StatusOK},
		{"other scheme", "", "Basic s3cret", http.StatusUnauthorized},
		{"loopback origin", "http://localhost:3000", "Bearer s3cret", http.StatusOK},
		{"loopback ip origin", "http://127.0.0.1:8765", "Bearer s3cret", http.StatusOK},
		{"allowed origin", "https://ok.example", "Bearer s3cret", http.StatusOK},
		{"rebinding origin", "http://evil.example", "Bearer s3cret", http.StatusForbidden},
		{"lookalike origin", "http://localhost.evil.example", "Bearer s3cret", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(initBody))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d (body %q)", resp.StatusCode, tc.want, body)
			}
		})
	}
}

// bearerTransport adds the token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestHTTPClientSession(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	h, err := HTTPHandler(New(&Config{Logger: log}), &HTTPOptions{Token: "tok", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: ts.URL, HTTPClient: &http.Client{Transport: bearerTransport{"tok"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"prompt": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	wantAll(t, errorLine(t, res), "no LLM provider key")
}
