package httpguard

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Policy says who may use an HTTP edge. The zero value admits requests
// without a key from loopback origins (or none) on any Host that names
// loopback.
type Policy struct {
	// Keys are the accepted keys, sent as "Authorization: Bearer <key>" (the
	// scheme in any case) or "x-api-key: <key>". Empty: no key is needed.
	Keys []string
	// AllowedOrigins are browser origins ("https://app.example") admitted
	// besides loopback ones (http or https on localhost, 127.0.0.0/8 or
	// [::1], any port). A request without an Origin header (not sent by a
	// browser page) is always admitted.
	AllowedOrigins []string
	// AllowedHosts are Host names ("gateway.internal", without port)
	// admitted besides loopback names on a connection to a loopback
	// address: the listener's own configured name, say. On a connection to
	// any other address every Host is admitted.
	AllowedHosts []string
	// KeyName names the key in refusals ("" = "key"): "gateway key",
	// "MCP token".
	KeyName string
}

// Guard applies a Policy to requests. Create it with New; it is safe for
// concurrent use and read-only after New. The zero value admits every
// request without a key and checks only Host and Origin.
type Guard struct {
	keys    [][sha256.Size]byte
	keyName string
	origins map[string]bool
	hosts   map[string]bool
}

// New returns the Guard of p (nil = the zero Policy). It fails on an empty
// key or an origin that is not scheme://host[:port].
func New(p *Policy) (*Guard, error) {
	g := &Guard{keyName: "key", origins: map[string]bool{}, hosts: map[string]bool{}}
	if p == nil {
		return g, nil
	}
	if p.KeyName != "" {
		g.keyName = p.KeyName
	}
	for _, k := range p.Keys {
		if strings.TrimSpace(k) == "" {
			return nil, errors.New("empty " + g.keyName)
		}
		g.keys = append(g.keys, sha256.Sum256([]byte(k)))
	}
	for _, o := range p.AllowedOrigins {
		n, ok := normalOrigin(o)
		if !ok {
			return nil, errors.New("allowed origin " + quote(o) + " is not scheme://host[:port] (like https://app.example)")
		}
		g.origins[n] = true
	}
	for _, h := range p.AllowedHosts {
		if h = hostName(h); h != "" {
			g.hosts[h] = true
		}
	}
	return g, nil
}

// NeedsKey reports whether requests must carry a key.
func (g *Guard) NeedsKey() bool { return len(g.keys) > 0 }

// Refusal is why a request was refused: the HTTP status to answer (401, 403
// or 415) and one line for the caller.
type Refusal struct {
	Status  int
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// CheckSource refuses a request a web page could have sent on the user's
// behalf: a Host that is not a loopback name (or an allowed one) on a
// connection to a loopback address, which is what DNS rebinding looks like,
// or an Origin that is neither loopback nor allowed. It returns nil for an
// admitted request. The status is 403 either way.
func (g *Guard) CheckSource(r *http.Request) *Refusal {
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && isLoopbackAddr(la) {
		if h := hostName(r.Host); !isLoopbackName(h) && !g.hosts[h] {
			return &Refusal{Status: http.StatusForbidden, Message: "host " + quote(r.Host) +
				" not allowed: this server listens on loopback; use http://127.0.0.1 or http://localhost"}
		}
	}
	if o := r.Header.Get("Origin"); o != "" && !g.originOK(o) {
		return &Refusal{Status: http.StatusForbidden, Message: "origin " + quote(o) +
			" not allowed: a web page may not call this server (admit it with --allow-origin)"}
	}
	return nil
}

// CheckKey refuses a request without an accepted key (401) when the policy
// has keys; nil means admitted. Keys are compared in constant time.
func (g *Guard) CheckKey(r *http.Request) *Refusal {
	if len(g.keys) == 0 {
		return nil
	}
	got := PresentedKey(r)
	if got != "" {
		sum := sha256.Sum256([]byte(got))
		ok := 0
		for i := range g.keys {
			ok |= subtle.ConstantTimeCompare(sum[:], g.keys[i][:])
		}
		if ok == 1 {
			return nil
		}
	}
	msg := "missing " + g.keyName + ": send it as Authorization: Bearer <key> or x-api-key: <key>"
	if got != "" {
		msg = "wrong " + g.keyName
	}
	return &Refusal{Status: http.StatusUnauthorized, Message: msg}
}

// Check applies the whole policy: CheckSource, then CheckKey. It returns
// the first refusal, or nil for an admitted request.
func (g *Guard) Check(r *http.Request) *Refusal {
	if ref := g.CheckSource(r); ref != nil {
		return ref
	}
	return g.CheckKey(r)
}

// PresentedKey is the key a request carries: the x-api-key header, else the
// token of an Authorization header whose scheme is Bearer in any case ("" if
// neither).
func PresentedKey(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-Api-Key")); k != "" { // canonical: Get copies no key
		return k
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// CheckJSON refuses (415) a request body whose Content-Type is not JSON
// (application/json or any application/*+json). text/plain, form and
// multipart bodies are what a web page can POST cross-origin without a
// CORS preflight, so they are never admitted. A request with no
// Content-Type is admitted: a browser that sends none also sends an Origin,
// which CheckSource judges.
func CheckJSON(r *http.Request) *Refusal {
	ct := r.Header.Get("Content-Type")
	if ct == "" || ct == "application/json" {
		return nil // no type, or JSON exactly (what clients send): nothing to parse
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return &Refusal{Status: http.StatusUnsupportedMediaType, Message: "content type " + quote(ct) +
		" not supported: send the body as JSON with Content-Type: application/json"}
}

// Preflight answers a CORS preflight (OPTIONS with an Origin and
// Access-Control-Request-Method) and reports whether r was one. An admitted
// origin gets 204 with the methods and the requested headers allowed; any
// other gets 403 with the refusal's message as text.
func (g *Guard) Preflight(w http.ResponseWriter, r *http.Request, methods string) bool {
	if r.Method != http.MethodOptions || r.Header.Get("Origin") == "" || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	if ref := g.CheckSource(r); ref != nil {
		http.Error(w, ref.Message, ref.Status)
		return true
	}
	h := w.Header()
	g.AllowOrigin(h, r)
	h.Set("Access-Control-Allow-Methods", methods)
	if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" && len(rh) <= 2048 {
		h.Set("Access-Control-Allow-Headers", rh)
	}
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// exposed are the response headers a page may read cross-origin.
const exposed = "X-Llmguard-Target, X-Llmguard-Attempts, X-Llmguard-Fallbacks, X-Llmguard-Upstream-Request-Id, " +
	"X-Llmguard-Cached, X-Llmguard-Static, X-Llmguard-Estimate, Request-Id, X-Request-Id, Retry-After, " +
	"X-Should-Retry, Mcp-Session-Id, Mcp-Protocol-Version"

// AllowOrigin sets the CORS response headers for a request CheckSource
// admitted that carries an Origin, so the page that sent it can read the
// answer; it does nothing for a request without one.
func (g *Guard) AllowOrigin(h http.Header, r *http.Request) {
	o := r.Header.Get("Origin")
	if o == "" {
		return
	}
	h.Set("Access-Control-Allow-Origin", o)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", exposed)
}

// originOK reports whether origin is loopback or allowed.
func (g *Guard) originOK(origin string) bool {
	n, ok := normalOrigin(origin)
	if !ok {
		return false
	}
	if g.origins[n] {
		return true
	}
	u, _ := url.Parse(n)
	return isLoopbackName(u.Hostname())
}

// normalOrigin lower-cases an origin's scheme and host and checks that it
// is http(s)://host[:port] with nothing else.
func normalOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSuffix(o, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), true
}

// hostName is the lower-cased host of a Host header value, without port
// or IPv6 brackets.
func hostName(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
}

// isLoopbackName reports whether host (from hostName) is localhost or a
// loopback IP.
func isLoopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether a is a loopback TCP or UDP address, or a
// host:port naming one (localhost included).
func IsLoopback(a net.Addr) bool { return isLoopbackAddr(a) }

func isLoopbackAddr(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UDPAddr:
		return a.IP.IsLoopback()
	case nil:
		return false
	}
	return isLoopbackName(hostName(a.String()))
}

// quote quotes s for a message, cut to at most 100 bytes on a rune boundary.
func quote(s string) string {
	if len(s) > 100 {
		s = strings.ToValidUTF8(s[:100], "") + "…"
	}
	return strconv.Quote(s)
}
