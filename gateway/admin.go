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

func writeJSON(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	v := []string{"application/json", strconv.Itoa(len(b))} // one allocation; cap 1 each
	h["Content-Type"] = v[0:1:1]
	h["Content-Length"] = v[1:2:2]
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
