package gateway

import (
	"net/http"
	"path"
	"strings"

	"github.com/segmentio/encoding/json"
)

// This file answers every request no endpoint takes, in the dialect of its
// path: unknown paths (404), known paths with the wrong method (405) and
// GET /v1/models/{id}. net/http's own answers (431, malformed requests) are
// rewritten the same way in notfound_conn.go. Nothing the gateway sends is
// text/plain.

// endpoints lists every path the gateway serves and its method, for 405s and
// the 404 message.
var endpoints = map[string]string{
	"/v1/chat/completions":      http.MethodPost,
	"/v1/messages":              http.MethodPost,
	"/v1/messages/count_tokens": http.MethodPost,
	"/v1/responses":             http.MethodPost,
	"/v1/embeddings":            http.MethodPost,
	"/v1/models":                http.MethodGet,
	"/healthz":                  http.MethodGet,
	"/readyz":                   http.MethodGet,
	"/status":                   http.MethodGet,
}

// pathDialect is the error dialect for a request to p: Anthropic for the
// Messages API's paths and for any request carrying anthropic-version (the
// Anthropic SDKs send it everywhere, /v1/models included), else OpenAI.
func pathDialect(p string, h http.Header) string {
	if p == "/v1/messages" || strings.HasPrefix(p, "/v1/messages/") || p == "/v1/complete" ||
		(h != nil && h.Get("Anthropic-Version") != "") {
		return DialectAnthropic
	}
	return DialectOpenAI
}

// notFound answers a request that no endpoint took: 405 with Allow for a
// known path, else 404, as a JSON error in the path's dialect.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	d := pathDialect(r.URL.Path, r.Header)
	if want, ok := endpoints[r.URL.Path]; ok && r.Method != want && !(want == http.MethodGet && r.Method == http.MethodHead) {
		w.Header().Set("Allow", want)
		writeError(w, d, errMethod(r.Method, want))
		return
	}
	writeError(w, d, errNoEndpoint(d, r.Method, r.URL.Path))
}

// errMethod is the 405 for a known path called with the wrong method.
func errMethod(got, want string) *apiError {
	return &apiError{status: http.StatusMethodNotAllowed, kind: kindInvalidRequest,
		message: "method " + got + " not allowed; use " + want, retry: "false"}
}

// errNoEndpoint is the 404 for a path the gateway does not serve. OpenAI
// answers an unknown URL with invalid_request_error, Anthropic with
// not_found_error.
func errNoEndpoint(dialect, method, p string) *apiError {
	kind := kindInvalidRequest
	if dialect == DialectAnthropic {
		kind = kindNotFound
	}
	if len(p) > 200 {
		p = p[:200] + "…"
	}
	return &apiError{status: http.StatusNotFound, kind: kind, retry: "false",
		message: "no such endpoint: " + method + " " + p + " (llmguard serves POST /v1/chat/completions, /v1/messages, /v1/responses, /v1/embeddings and GET /v1/models)"}
}

// cleanPaths wraps the mux so that a path net/http would redirect (//x,
// /a/../b: a 301 with an HTML body) gets the JSON 404 instead; the API has
// no such paths.
func (s *Server) cleanPaths(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p == "" || p[0] != '/' || (path.Clean(p) != p && path.Clean(p)+"/" != p) {
			s.notFound(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// serveModel answers GET /v1/models/{id} for a model the gateway serves: a
// route, one of their targets, or a provider/model of a configured provider
// (what a chat request may name), in the shape of a /v1/models entry.
func (s *Server) serveModel(w http.ResponseWriter, r *http.Request, dialect string) {
	id := strings.TrimPrefix(r.URL.Path, "/v1/models/")
	if id == "" {
		s.serveModels(w, r, dialect)
		return
	}
	if !s.modelExists(id) {
		writeError(w, dialect, errNoModel(id))
		return
	}
	writeJSON(w, http.StatusOK, appendModel(nil, id))
}

// modelExists reports whether id is a route, a route's target (or its bare
// model), or a provider/model of a configured provider. A bare name that
// only default_provider would take is not claimed: that takes any name.
func (s *Server) modelExists(id string) bool {
	if _, ok := s.routes[id]; ok {
		return true
	}
	for _, ts := range s.routes {
		for _, t := range ts {
			if _, m, _ := strings.Cut(t, "/"); t == id || m == id {
				return true
			}
		}
	}
	p, m, ok := strings.Cut(id, "/")
	if !ok || p == "" || m == "" {
		return false
	}
	_, ok = s.cat.Configured(p)
	return ok
}

func errNoModel(id string) *apiError {
	if len(id) > 200 {
		id = id[:200] + "…"
	}
	return &apiError{status: http.StatusNotFound, kind: kindNotFound, retry: "false",
		message: "the model " + rawjsonQuote(id) + " does not exist on this gateway: GET /v1/models lists the routes and targets"}
}

func rawjsonQuote(s string) string { return string(json.AppendEscape(nil, s, 0)) }

// appendModel appends one model object in a shape both SDKs accept (OpenAI's
// id/object/created/owned_by, Anthropic's type/display_name/created_at).
func appendModel(b []byte, id string) []byte {
	b = append(b, `{"id":`...)
	b = json.AppendEscape(b, id, 0)
	b = append(b, `,"object":"model","type":"model","created":0,"created_at":"1970-01-01T00:00:00Z","owned_by":"llmguard","display_name":`...)
	b = json.AppendEscape(b, id, 0)
	return append(b, '}')
}
