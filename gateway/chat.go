package gateway

import (
	"crypto/rand"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/llmguard/llmguard/resilience"
)

// resolve maps a client's model name to an engine route: a route name, a
// "provider/model" target of a configured provider, a bare model id that a
// route's target serves, or a bare name sent to default_provider (see
// catalog.Catalog.ResolveModel). The error names both ways to fix an
// unknown name.
func (s *Server) resolve(model string, routes map[string][]string) (string, error) {
	return s.cat.ResolveModel(model, routes)
}

// expand turns per-request fallback names into targets: a route name adds
// its targets, anything else is resolved like a model name.
func (s *Server) expand(names []string, routes map[string][]string) ([]string, error) {
	var out []string
	for _, n := range names {
		if n == "" {
			continue
		}
		if ts, ok := routes[n]; ok {
			out = append(out, ts...)
			continue
		}
		t, err := s.resolve(n, routes)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func routeNames(routes map[string][]string) []string {
	names := make([]string, 0, len(routes))
	for n := range routes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// serveChat serves /v1/chat/completions and /v1/messages.
func (s *Server) serveChat(w http.ResponseWriter, r *http.Request, dialect string) {
	body, held, aerr := s.readChatBody(w, r)
	if aerr != nil {
		writeError(w, dialect, aerr)
		return
	}
	in, err := decodeChat(dialect, body, held)
	idem := s.idempotencyKey(r, body)
	route, fallbacks, ok := s.routeNamed(w, dialect, in, err)
	if !ok {
		return
	}
	if err := s.settle(in, route, fallbacks); err != nil {
		writeError(w, dialect, errBadRequest(err.Error()))
		return
	}
	if dialect == DialectAnthropic {
		// Beta features (Claude Code sends several) need their header on
		// an Anthropic target; other dialects never see it.
		if beta := r.Header.Values("Anthropic-Beta"); len(beta) > 0 {
			in.req.Headers = map[string]string{"anthropic-beta": strings.Join(beta, ",")}
		}
	}
	res, ok := s.call(w, r, dialect, in, route, fallbacks, idem)
	if !ok {
		return
	}
	setDropped(w.Header(), answerDropped(dialect, res.Response))
	if raw := res.Response.Raw; raw != nil {
		writeJSON(w, http.StatusOK, raw) // relayed: the provider's own answer
		return
	}
	bp := s.bufs.Get().(*[]byte)
	resp := res.Response
	if resp.Model == "" {
		// A copy: a cached response is shared by every replay.
		r := *resp
		_, r.Model, _ = strings.Cut(res.Target, "/")
		resp = &r
	}
	if dialect == DialectAnthropic {
		*bp = appendAnthropicResponse((*bp)[:0], resp, responseID(dialect, resp.ID))
	} else {
		*bp = appendOpenAIResponse((*bp)[:0], resp, responseID(dialect, resp.ID), s.now().Unix())
	}
	writeJSON(w, http.StatusOK, *bp)
	s.putBuf(bp)
}

// routeNamed answers a request whose body did not decode (decodeErr) with
// a 400, else checks in's model and fallback names, notes the model on the
// access record and resolves the route (see routeFor); when not ok, the
// error has been written.
func (s *Server) routeNamed(w http.ResponseWriter, dialect string, in *inbound, decodeErr error) (route string, fallbacks []string, ok bool) {
	if decodeErr != nil {
		writeError(w, dialect, errBadRequest(decodeErr.Error()))
		return "", nil, false
	}
	if aerr := checkNames(in); aerr != nil {
		accessOf(w).noteModel(headerValue(in.model), in.req.Stream)
		writeError(w, dialect, aerr)
		return "", nil, false
	}
	accessOf(w).noteModel(in.model, in.req.Stream)
	return s.routeFor(w, dialect, in.model, in.fallbacks)
}

// fail writes an engine failure (nothing has been sent yet).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, dialect, route string, err error) {
	if r.Context().Err() != nil {
		return // the client went away
	}
	accessOf(w).noteFailure(err)
	e := fromEngine(err, s.now())
	s.log.Warn("gateway: call failed", "route", route, "status", e.status, "err", err.Error())
	writeError(w, dialect, e)
}

// call sends in to the engine on route. A stream is served to its end and
// a failure answered (ok false); a whole answer comes back with its
// x-llmguard-* headers set, for the caller to write.
func (s *Server) call(w http.ResponseWriter, r *http.Request, dialect string, in *inbound, route string, fallbacks []string, idem string) (res *resilience.Result, ok bool) {
	accessOf(w).noteRoute(route)
	if _, m, ok := strings.Cut(route, "/"); ok {
		in.req.Model = m
	} else {
		in.req.Model = in.model
	}
	ceiling, aerr := maxCost(r)
	if aerr != nil {
		writeError(w, dialect, aerr)
		return nil, false
	}
	call := &resilience.Call{Route: route, Request: in.req, Fallbacks: fallbacks,
		IdempotencyKey: idem, RepeatScope: s.repeatScope(r), MaxCostUSD: ceiling}
	if a := accessOf(w); a != nil && a.span != nil {
		call.OnEvent = a.span.Event
	}
	if in.req.Stream {
		s.serveStream(w, r, in, call)
		return nil, false
	}
	res, err := s.eng.Chat(r.Context(), call)
	if err != nil {
		s.fail(w, r, dialect, route, err)
		return nil, false
	}
	accessOf(w).noteAnswer(res.Response)
	setCallHeaders(w.Header(), dialect, res)
	return res, true
}

// setCallHeaders sets the headers of an engine result: where it went (see
// setResultHeaders), what it cost, and whether it is a cached or a static
// answer.
func setCallHeaders(h http.Header, dialect string, res *resilience.Result) {
	setResultHeaders(h, dialect, res.Target, res.Attempts, res.Fallbacks, res.Response.RequestID)
	setCostHeaders(h, res.Cost, res.Wasted)
	if res.Cached {
		h.Set("X-Llmguard-Cached", "true")
		h.Set("Idempotent-Replayed", "true")
	}
	if res.Static {
		h.Set("X-Llmguard-Static", "true")
	}
}

// setResultHeaders sets the x-llmguard-* headers and the upstream request
// id. Keys are written in canonical form directly (no per-call
// canonicalisation on the hot path).
// The values share one backing array (one allocation), each sliced with
// capacity 1 so that appending to one copies it, as in http.Header.Clone.
func setResultHeaders(h http.Header, dialect, target string, attempts, fallbacks int, requestID string) {
	target, requestID = headerValue(target), headerValue(requestID)
	v := []string{target, strconv.Itoa(attempts), strconv.Itoa(fallbacks), requestID, requestID}
	h["X-Llmguard-Target"] = v[0:1:1]
	h["X-Llmguard-Attempts"] = v[1:2:2]
	h["X-Llmguard-Fallbacks"] = v[2:3:3]
	if requestID != "" {
		h["X-Llmguard-Upstream-Request-Id"] = v[3:4:4]
		if dialect == DialectAnthropic {
			h["Request-Id"] = v[4:5:5]
		} else {
			h["X-Request-Id"] = v[4:5:5]
		}
	}
}

// responseID keeps the upstream id when it has the dialect's prefix, else
// makes one.
func responseID(dialect, upstream string) string {
	prefix := "chatcmpl-"
	if dialect == DialectAnthropic {
		prefix = "msg_"
	}
	if strings.HasPrefix(upstream, prefix) {
		return upstream
	}
	return prefix + rand.Text()
}
