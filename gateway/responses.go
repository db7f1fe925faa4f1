package gateway

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/llmguard/llmguard/provider"
)

// serveResponses serves POST /v1/responses, OpenAI's Responses API (the
// Vercel AI SDK's default openai(model), the OpenAI Agents SDK, Codex CLI),
// through the engine like a chat: an OpenAI target gets the body as the
// client sent it and its answer goes back verbatim; any other target gets
// the request translated, and its answer comes back as a response object or
// typed event stream, its output items kept for a later item_reference
// (responses_items.go). A request that needs state only OpenAI holds
// (previous_response_id, an item_reference the gateway does not hold) goes
// only to a target that relays it, and gets a one-line 400 when the route
// has none.
func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request, dialect string) {
	raw, aerr := s.readBody(w, r)
	if aerr != nil {
		writeError(w, dialect, aerr)
		return
	}
	idem := s.idempotencyKey(r, raw)
	body, aerr := s.resolveRefs(r, raw)
	if aerr != nil {
		writeError(w, dialect, aerr)
		return
	}
	in, err := decodeResponses(body)
	route, fallbacks, ok := s.routeNamed(w, dialect, in, err)
	if !ok {
		return
	}
	if only := in.req.Passthrough.Only; only != "" {
		if targets, ok := s.relayTargets(route, fallbacks); !ok {
			writeError(w, dialect, errStateless(only, route, targets))
			return
		}
	}
	res, ok := s.call(w, r, dialect, in, route, fallbacks, idem)
	if !ok {
		return
	}
	resp := res.Response
	setDropped(w.Header(), rsDropped(in, resp.Raw != nil, resp.Dropped))
	if resp.Raw != nil {
		writeJSON(w, http.StatusOK, resp.Raw) // relayed: the upstream's own body
		return
	}
	model := resp.Model
	if model == "" {
		_, model, _ = strings.Cut(res.Target, "/")
	}
	id := resp.ID
	if !strings.HasPrefix(id, "resp_") {
		id = newItemID("resp_")
	}
	a := answerOf(resp, id, s.now().Unix(), echoOf(in))
	a.model = model
	k := s.keeper(r, in)
	a.kept = k != nil
	k.keep(a.items)
	bp := s.bufs.Get().(*[]byte)
	*bp = a.appendObject((*bp)[:0], true)
	writeJSON(w, http.StatusOK, *bp)
	s.putBuf(bp)
}

// rsDropped is what a Responses request lost on its way: nothing when it
// was relayed, else what the translation left out, then what the target's
// adapter could not send.
func rsDropped(in *inbound, relayed bool, adapter []string) []string {
	if relayed || in.req.Passthrough == nil {
		return adapter
	}
	return append(append([]string(nil), in.req.Passthrough.Untranslated...), adapter...)
}

// rsStreamDropped is rsDropped for a stream whose first chunk is first:
// relayed when it carries the upstream's own event.
func rsStreamDropped(in *inbound, first *provider.Chunk) []string {
	if in.dialect != DialectResponses {
		return first.Dropped
	}
	return rsDropped(in, first.Raw != nil, first.Dropped)
}

// routeFor resolves a request's model and per-request fallbacks to the
// engine's route and targets; on an unknown name it writes the 404 and ok
// is false.
func (s *Server) routeFor(w http.ResponseWriter, dialect, model string, names []string) (route string, fallbacks []string, ok bool) {
	route, err := s.resolve(model, s.routes)
	if err == nil {
		fallbacks, err = s.expand(names, s.routes)
	}
	if err != nil {
		writeError(w, dialect, errUnknownModel(err))
		return "", nil, false
	}
	return route, fallbacks, true
}

// relayTargets lists the call's targets (the route's, then the fallbacks)
// and reports whether any of them relays Responses API bodies.
func (s *Server) relayTargets(route string, fallbacks []string) ([]string, bool) {
	targets := s.routes[route]
	if targets == nil {
		targets = []string{route}
	}
	targets = append(append([]string(nil), targets...), fallbacks...)
	for _, t := range targets {
		p, _, _ := strings.Cut(t, "/")
		if info, ok := s.cat.Provider(p); ok && info.Responses {
			return targets, true
		}
	}
	return targets, false
}

// errStateless is the 400 for a request that needs state (or a feature)
// only OpenAI's Responses API has, on a route with no OpenAI target.
func errStateless(only, route string, targets []string) *apiError {
	list := strings.Join(targets, ", ")
	if len(list) > 200 {
		list = list[:200] + "…"
	}
	none := "no target of " + strconv.Quote(route) + " (" + list + ") is OpenAI's Responses API, which could"
	var msg string
	switch {
	case strings.HasPrefix(only, "item_reference"):
		msg = only + ": the gateway holds no item with this id (it keeps its own answers' output items for a while, per gateway key;" +
			" this one expired, was kept by another replica or was never one of them) and " + none +
			"; send the item's content in \"input\" instead of the reference, or set \"store\": false" +
			" (AI SDK: providerOptions: {openai: {store: false}})"
	case only == "previous_response_id" || only == "conversation":
		msg = only + ": the gateway keeps no conversation state (only its own answers' output items, for item_reference) and " +
			none + "; send the whole conversation in \"input\" instead"
	default:
		msg = only + " is served only by OpenAI's Responses API and no target of " + strconv.Quote(route) + " (" + list + ") is one"
	}
	return &apiError{status: http.StatusBadRequest, kind: kindInvalidRequest, message: msg, retry: "false"}
}
