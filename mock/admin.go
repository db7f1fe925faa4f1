package mock

import (
	"net/http"

	"github.com/segmentio/encoding/json"
)

// admin serves /_mock/requests (GET: the log as JSON, filterable with
// ?provider=, ?model= and ?path=), /_mock/reset (POST) and /_mock/scenario (GET).
func (s *Server) admin(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/_mock/requests" && r.Method == http.MethodGet:
		q := r.URL.Query()
		reqs := make([]Request, 0)
		for _, e := range s.Requests() {
			if (q.Get("provider") == "" || q.Get("provider") == e.Provider) &&
				(q.Get("model") == "" || q.Get("model") == e.Model) &&
				(q.Get("path") == "" || q.Get("path") == e.Path) {
				reqs = append(reqs, e)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"count": len(reqs), "requests": reqs})
	case r.URL.Path == "/_mock/reset" && r.Method == http.MethodPost:
		s.Reset()
		w.WriteHeader(http.StatusNoContent)
	case r.URL.Path == "/_mock/scenario" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"name": s.sc.Name, "description": s.sc.Description, "rules": len(s.sc.Rules)})
	default:
		writeMockError(w, http.StatusNotFound, "llmguard mock: no admin endpoint "+r.Method+" "+r.URL.Path)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ctJSON)
	w.WriteHeader(status)
	w.Write(b)
}

// writeMockError answers a request the mock itself cannot serve (not a
// simulated provider error).
func writeMockError(w http.ResponseWriter, status int, msg string) {
	b := append([]byte(`{"error":{"type":"mock_error","message":`), json.AppendEscape(nil, msg, 0)...)
	b = append(b, "}}"...)
	w.Header().Set("Content-Type", ctJSON)
	w.WriteHeader(status)
	w.Write(b)
}
