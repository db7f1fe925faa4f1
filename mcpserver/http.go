package mcpserver

import (
	"crypto/subtle"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configures HTTPHandler. A nil *HTTPOptions means defaults.
type HTTPOptions struct {
	// Token, when set, is the bearer token every request must carry
	// ("Authorization: Bearer <token>"); "" admits requests without one.
	Token string
	// AllowedOrigins lists origins ("https://app.example") admitted besides
	// loopback ones. A request without an Origin header (not from a
	// browser) is always admitted.
	AllowedOrigins []string
	// Logger receives rejected requests (nil = slog.Default()).
	Logger *slog.Logger
}

// HTTPHandler serves srv over MCP's Streamable HTTP transport. Against DNS
// rebinding it rejects, with 403, a request whose Origin is neither a
// loopback origin nor listed in AllowedOrigins (and the SDK rejects a
// loopback connection whose Host is not loopback); with a Token it rejects a
// request without that bearer token with 401. Safe for concurrent use.
func HTTPHandler(srv *mcp.Server, o *HTTPOptions) http.Handler {
	var opts HTTPOptions
	if o != nil {
		opts = *o
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Logger: opts.Logger, PropagateRequestCancellation: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !loopbackOrigin(origin) && !slices.Contains(opts.AllowedOrigins, origin) {
			opts.Logger.Warn("mcp http: origin rejected", "origin", origin, "remote", r.RemoteAddr)
			http.Error(w, "llmguard mcp: origin not allowed", http.StatusForbidden)
			return
		}
		if opts.Token != "" && !bearerOK(r.Header.Get("Authorization"), opts.Token) {
			opts.Logger.Warn("mcp http: missing or wrong bearer token", "remote", r.RemoteAddr)
			w.Header().Set("WWW-Authenticate", `Bearer realm="llmguard"`)
			http.Error(w, "llmguard mcp: missing or wrong bearer token (set it in the client's Authorization header)", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	})
}

func bearerOK(header, token string) bool {
	got, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

// loopbackOrigin reports whether origin is http(s)://localhost, 127.0.0.0/8 or [::1], any port.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
