package gateway

import (
	"net/http"
	"strconv"

	"github.com/llmguard/llmguard/resilience"
	"github.com/segmentio/encoding/json"
)

func (s *Server) admin(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", s.adminCheck(false, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
	}))
	mux.HandleFunc("GET /readyz", s.adminCheck(false, func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			writeJSON(w, http.StatusServiceUnavailable, []byte(`{"status":"draining"}`))
			return
		}
		writeJSON(w, http.StatusOK, []byte(`{"status":"ready"}`))
	}))
	// /status shows last errors, breaker states and other clients' model
	// names: it needs the gateway key when there are keys.
	mux.HandleFunc("GET /status", s.adminCheck(true, func(w http.ResponseWriter, r *http.Request) {
		b, err := json.Marshal(struct {
			Targets []resilience.TargetStatus `json:"targets"`
			Routes  map[string][]string       `json:"routes"`
		}{s.eng.Status(), s.routes})
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, []byte(`{"error":"status unavailable"}`))
			return
		}
		writeJSON(w, http.StatusOK, b)
	}))
	if ui := s.opts.UI; ui != nil {
		mux.Handle("GET /ui", s.adminCheck(false, ui.ServeHTTP))
		mux.Handle("GET /ui/", s.adminCheck(false, ui.ServeHTTP))
		mux.Handle("GET /ui/events", s.adminCheck(true, ui.ServeHTTP))
		mux.Handle("GET /ui/snapshot", s.adminCheck(true, ui.ServeHTTP))
	}
	if s.metrics != nil {
		// Like /status, the metrics name targets and their failures.
		mux.Handle("GET /metrics", s.adminCheck(true, s.metrics.Handler().ServeHTTP))
	}
}

// adminCheck applies the access policy to an admin endpoint: Host and
// Origin always, the gateway key when needKey.
func (s *Server) adminCheck(needKey bool, h http.HandlerFunc) http.HandlerFunc {
	check := s.guard.CheckSource
	if needKey {
		check = s.guard.Check
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if ref := check(r); ref != nil {
			b := json.AppendEscape([]byte(`{"error":`), ref.Message, 0)
			writeJSON(w, ref.Status, append(b, '}'))
			return
		}
		s.guard.AllowOrigin(w.Header(), r)
		h(w, r)
	}
}

// writeJSON writes the JSON body b with its status, Content-Type and
// Content-Length. A body of at most implicitLength bytes is one write that
// net/http holds until the handler returns and then sends with the
// Content-Length it counted (HTTP/1 and HTTP/2 alike): the header is left
// to it, which keeps an answer's headers (content type and length, the
// x-llmguard-* and request ids: nine) within the eight a small header map
// holds, and saves growing the map and its copy at WriteHeader (5 of a
// gateway request's allocations). The response on the wire is the same.
func writeJSON(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	if len(b) <= implicitLength {
		h["Content-Type"] = jsonType
	} else {
		v := []string{"application/json", strconv.Itoa(len(b))} // one allocation; cap 1 each
		h["Content-Type"] = v[0:1:1]
		h["Content-Length"] = v[1:2:2]
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// implicitLength is the largest body writeJSON leaves net/http to count:
// the buffer its HTTP/1 server fills before it would send the body chunked
// (its bufferBeforeChunkingSize; HTTP/2's is larger).
const implicitLength = 2048

// jsonType is the Content-Type value of every JSON answer. It is shared,
// never modified, with capacity 1, so that an append copies it.
var jsonType = []string{"application/json"}[:1:1]
