package gateway

import (
	"errors"
	"slices"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// Relaying a long request (issue 19): a chat request in the dialect of
// every target it may reach (an OpenAI body on a route of OpenAI-family
// targets, an Anthropic body on Anthropic targets) goes upstream as its
// client sent it, spliced as slices of the client's buffer: the gateway
// reads only what routing needs (model, stream, fallbacks, max tokens,
// metadata) and leaves the messages undecoded, for the engine to decode
// only if it must (provider.Request.Full: a token estimate, the static
// fallback, a continuation). So such a body with a type error inside a
// message (a content block of the wrong shape) gets the upstream's own 400,
// relayed truthfully, where the gateway answered its own 400 before; a
// body that is not a JSON object, or lacks or mistypes what routing needs,
// still gets the gateway's one-line 400. A request any of whose targets
// speaks another dialect is decoded whole before the call, as ever (its
// texts left undecoded in the body for an OpenAI-family target: settle).

// decodeChat decodes what routing needs of a chat request body of dialect
// (model, stream, fallbacks, max tokens, metadata; stream options) and
// leaves the conversation to the request's Deferred, which decodes it as
// decodeOpenAI and decodeAnthropic do: a request relayed in its dialect
// goes upstream as it came, its messages never decoded (see settle). A body
// that does not decode this far gets the whole decoder's 400. body is kept:
// the request's raw values and its Passthrough point into it, so the
// caller must not change it. held, when not nil, is body's pooled buffer:
// it becomes the Passthrough's Hold, and what the whole decoding gives
// points into it too (a translated request's texts, Part.Raw, tool
// arguments, extra fields), so it is read only while held: by the handler
// until it returns, and by whatever may outlive it from the Hold's Acquire
// to its Release (an upstream send of the parts, a hedge branch, a shared
// flight: provider.Hold). A copy of the body for the decoding to point
// into cost a translated request of 512 KB a fifth of the gateway's time
// and 512 of its 734 KiB allocated.
func decodeChat(dialect string, body []byte, held *pooledBody) (*inbound, error) {
	in, err := relayRequest(dialect, body)
	if err != nil {
		if ferr := whole(dialect, body, &inbound{}); ferr != nil {
			return nil, ferr // the 400 it always was
		}
		return nil, err
	}
	known := in.req.Passthrough.Fields // nil when the body had routing fields
	in.req.Deferred = provider.NewDeferred(func() (*provider.Request, error) {
		if held != nil {
			if !held.Acquire() {
				return nil, errBodyReused // an attempt that outlived its request
			}
			defer held.Release()
		}
		w := &inbound{known: known, lean: true}
		if err := whole(dialect, body, w); err != nil {
			return nil, err
		}
		return w.req, nil
	})
	if held != nil {
		in.req.Passthrough.Hold = held
	}
	return in, nil
}

// errBodyReused is the decoding's error for a body whose buffer went back
// to the pool: only an attempt that outlived its request (a hedge that
// lost) meets it.
var errBodyReused = errors.New("request body no longer held: the request is done")

// relayRequest is decodeChat's decoding of what routing needs.
func relayRequest(dialect string, body []byte) (*inbound, error) {
	in := &inbound{}
	if dialect == DialectAnthropic {
		return in, anthropicDecode(body, in, true)
	}
	return in, openAIDecode(body, in, true)
}

// decodeWhole decodes a chat body of dialect whole, keeping body.
func decodeWhole(dialect string, body []byte) (*inbound, error) {
	in := &inbound{}
	if err := whole(dialect, body, in); err != nil {
		return nil, err
	}
	return in, nil
}

// whole decodes body whole into in (whose known fields it may use).
func whole(dialect string, body []byte, in *inbound) error {
	if dialect == DialectAnthropic {
		return anthropicDecode(body, in, false)
	}
	return openAIDecode(body, in, false)
}

// deferField is the part of a relay decoding (see decodeChat) that skips
// the fields decoded later: the messages (only checked to be a non-empty
// array) and the keys in later. known is false for any other key.
func deferField(in *inbound, k string, v json.RawMessage, later ...string) (known bool, err error) {
	if k == "messages" {
		if !isArray(v) {
			return true, typeError("", "an array of messages", v)
		}
		in.messages = !rawjson.IsNull(v) && rawjson.EachElement(v, func([]byte) error { return errStop }) == errStop
		return true, nil
	}
	return slices.Contains(later, k), nil
}

// errStop ends a walk early.
var errStop = errors.New("stop")

// settle decodes the rest of a chat request (see decodeChat) unless every
// target of the call, the route's and the per-request fallbacks, relays its
// dialect; the error is the whole decoder's 400. Where every other target
// is of the OpenAI family, whose adapter sends the texts as the client
// wrote them (provider.Request.Lean), the request keeps its Deferred: its
// texts are decoded only for whoever reads them (Full).
func (s *Server) settle(in *inbound, route string, fallbacks []string) error {
	if in.req.Deferred == nil || s.allTargets(route, fallbacks, func(family string) bool { return relays(family, in.dialect) }) {
		return nil
	}
	if s.allTargets(route, fallbacks, func(family string) bool { return relays(family, in.dialect) || readsLean(family) }) {
		lean, err := in.req.Lean()
		if err != nil {
			return err
		}
		d := in.req.Deferred
		*in.req = *lean
		in.req.Deferred = d
		return nil
	}
	full, err := in.req.Full()
	if err != nil {
		return err
	}
	*in.req = *full
	return nil
}

// allTargets reports whether every target of route and fallbacks is a
// provider of the catalogue whose dialect family passes ok.
func (s *Server) allTargets(route string, fallbacks []string, ok func(family string) bool) bool {
	targets := s.routes[route]
	if targets == nil {
		targets = []string{route}
	}
	for _, list := range [][]string{targets, fallbacks} {
		for _, t := range list {
			p, _, _ := strings.Cut(t, "/")
			info, found := s.cat.Provider(p)
			if !found || !ok(info.Dialect) {
				return false
			}
		}
	}
	return true
}

// readsLean reports whether an adapter of the catalogue's dialect family
// sends a request's texts as their client wrote them (Request.Lean).
func readsLean(family string) bool {
	return family == catalog.DialectOpenAI || family == catalog.DialectAzure
}

// relays reports whether an adapter of the catalogue's dialect family
// relays a chat body of the gateway's dialect.
func relays(family, dialect string) bool {
	switch dialect {
	case DialectOpenAI:
		return family == catalog.DialectOpenAI || family == catalog.DialectAzure
	case DialectAnthropic:
		return family == catalog.DialectAnthropic
	}
	return false
}
