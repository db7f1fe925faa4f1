package gateway

import (
	"net/http"
	"strconv"

	"github.com/llmguard/llmguard/provider"
	"github.com/segmentio/encoding/json"
)

// serveCountTokens answers Anthropic's token-counting endpoint (Claude Code
// calls it) with an estimate, about four characters per token, marked by
// the X-Llmguard-Estimate header: the route's targets may not share a
// tokenizer, and an upstream call would cost a request.
func (s *Server) serveCountTokens(w http.ResponseWriter, r *http.Request, dialect string) {
	in, ok := readRequest(s, w, r, dialect, anthropicRequest)
	if !ok {
		return
	}
	if aerr := checkNames(in); aerr != nil {
		writeError(w, dialect, aerr)
		return
	}
	w.Header().Set("X-Llmguard-Estimate", "true")
	b := append([]byte(`{"input_tokens":`), strconv.Itoa(provider.EstimateTokens(in.req))...)
	writeJSON(w, http.StatusOK, append(b, '}'))
}

// serveModels lists routes and targets in a shape both SDKs accept.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request, dialect string) {
	routes := s.routes
	seen := map[string]bool{}
	var ids []string
	for _, n := range routeNames(routes) {
		ids = append(ids, n)
		seen[n] = true
	}
	for _, n := range routeNames(routes) {
		for _, t := range routes[n] {
			if !seen[t] {
				seen[t] = true
				ids = append(ids, t)
			}
		}
	}
	b := []byte(`{"object":"list","data":[`)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendModel(b, id)
	}
	b = append(b, `],"has_more":false,"first_id":`...)
	if len(ids) > 0 {
		b = json.AppendEscape(b, ids[0], 0)
		b = append(b, `,"last_id":`...)
		b = json.AppendEscape(b, ids[len(ids)-1], 0)
	} else {
		b = append(b, `null,"last_id":null`...)
	}
	b = append(b, '}')
	writeJSON(w, http.StatusOK, b)
}
