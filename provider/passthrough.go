package provider

import (
	"encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
)

// DialectResponses names OpenAI's Responses API (POST /v1/responses) in
// Passthrough.Dialect.
const DialectResponses = "openai-responses"

// Passthrough is a request's original body, kept for an adapter that speaks
// its dialect natively: a Responses API body, or a chat request that stays
// in its dialect (Dialect "anthropic" or "openai", the Request's own, whose
// adapters send it byte for byte but for the fields they control). Code
// that changes the canonical fields of a request must drop its Passthrough. Such an adapter (a Relayer whose Relays(Dialect) is
// true) sends Body unchanged but for the model and the stream flag of the
// attempt, and returns the upstream's answer verbatim (Response.Raw,
// Chunk.Raw) besides its canonical form; every other adapter sends the
// Request's canonical fields. A request translated to another dialect loses
// what the canonical form lacks; one that is relayed loses nothing.
type Passthrough struct {
	// Dialect is the body's dialect (DialectResponses, "anthropic", "openai").
	Dialect string `json:"dialect"`
	// Body is the client's JSON body, without the gateway's own fields.
	Body json.RawMessage `json:"body"`
	// Fields, when set, are Body's top-level fields as the gateway found
	// them reading it (rawjson.Members): a relaying adapter sets its fields
	// with them instead of walking a long body once more. Nil: the adapter
	// walks Body. Whoever changes Body drops them.
	Fields []rawjson.Member `json:"-"`
	// Hold, when set, guards Body's buffer, which the gateway reuses once
	// the request is done: a reader that may outlive the request (an
	// upstream send) acquires it first (see Hold). Nil: Body is the
	// request's for good.
	Hold Hold `json:"-"`
	// Only, when set, says why no translation can serve the request, only a
	// relaying adapter: it needs state the upstream holds
	// ("previous_response_id", "item_reference") or a feature only that API
	// has ("tool web_search"). The engine skips every other target, giving
	// this reason.
	Only string `json:"only,omitempty"`
	// Untranslated names what the canonical translation of Body leaves out
	// ("include", "input[type=reasoning]"): a target that translates never
	// sees it, and the gateway says so in x-llmguard-dropped. Nil when the
	// translation carries everything.
	Untranslated []string `json:"untranslated,omitempty"`
}

// Relayer is implemented by adapters that can relay a Passthrough body of
// some dialect unchanged. Implementations are safe for concurrent use.
type Relayer interface {
	// Relays reports whether the adapter sends Passthrough bodies of
	// dialect as they are.
	Relays(dialect string) bool
}

// Relays reports whether a relays a Passthrough body of dialect.
func Relays(a Adapter, dialect string) bool {
	r, ok := a.(Relayer)
	return ok && r.Relays(dialect)
}

// RawEvent is one server-sent event as the upstream sent it.
type RawEvent struct {
	// Name is the SSE event name ("" when the event had none).
	Name string `json:"name,omitempty"`
	// Data is the event's data.
	Data json.RawMessage `json:"data"`
}
