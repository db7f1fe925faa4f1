package mcpserver

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/internal/httpguard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configures HTTPHandler. A nil *HTTPOptions means defaults.
type HTTPOptions struct {
	// Token, when set, is the bearer token every request must carry
	// ("Authorization: Bearer <token>", the scheme in any case, or
	// "x-api-key: <token>"); "" admits requests without one.
	Token string
	// AllowedOrigins lists origins ("https://app.example") admitted besides
	// loopback ones. A request without an Origin header (not from a
	// browser) is always admitted.
	AllowedOrigins []string
	// AllowedHosts lists Host names admitted besides loopback ones on a
	// loopback listener (nil = none).
	AllowedHosts []string
	// Logger receives rejected requests (nil = slog.Default()).
	Logger *slog.Logger
	// Handlers serves more paths beside MCP, behind the same access policy
	// (pattern, as http.ServeMux takes it, to handler; e.g. "GET /metrics").
	// nil = every path is MCP.
	Handlers map[string]http.Handler
}

// HTTPHandler serves srv over MCP's Streamable HTTP transport behind the
// access policy the gateway uses too (package internal/httpguard): against
// DNS rebinding it rejects, with 403, a request on a loopback connection
// whose Host is not loopback (or allowed) and a request whose Origin is
// neither a loopback origin nor listed in AllowedOrigins; with a Token it
// rejects a request without it with 401. Admitted browser origins get CORS
// headers and their preflights answered. Refusals are JSON-RPC error
// bodies. It fails on a malformed origin. Safe for concurrent use.
func HTTPHandler(srv *mcp.Server, o *HTTPOptions) (http.Handler, error) {
	opts := defaults.Copy(o)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	p := &httpguard.Policy{AllowedOrigins: opts.AllowedOrigins, AllowedHosts: opts.AllowedHosts, KeyName: "MCP token"}
	if opts.Token != "" {
		p.Keys = []string{opts.Token}
	}
	g, err := httpguard.New(p)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	var inner http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Logger: opts.Logger, PropagateRequestCancellation: true})
	if len(opts.Handlers) > 0 {
		mux := http.NewServeMux()
		for pattern, h := range opts.Handlers {
			mux.Handle(pattern, h)
		}
		mux.Handle("/", inner)
		inner = mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.Preflight(w, r, "GET, POST, DELETE, OPTIONS") {
			return
		}
		if ref := g.CheckSource(r); ref != nil {
			opts.Logger.Warn("mcp http: request refused", "remote", r.RemoteAddr, "why", ref.Message)
			refuse(w, ref)
			return
		}
		if ref := g.CheckKey(r); ref != nil {
			opts.Logger.Warn("mcp http: missing or wrong bearer token", "remote", r.RemoteAddr)
			w.Header().Set("WWW-Authenticate", `Bearer realm="llmguard"`)
			ref.Message += " (set it in the client's Authorization header)"
			refuse(w, ref)
			return
		}
		g.AllowOrigin(w.Header(), r)
		inner.ServeHTTP(w, r)
	}), nil
}

// refuse writes a refusal as a JSON-RPC error without an id.
func refuse(w http.ResponseWriter, ref *httpguard.Refusal) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": -32600, "message": "llmguard mcp: " + ref.Message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ref.Status)
	_, _ = w.Write(b)
}
