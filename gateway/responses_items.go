package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/httpguard"
	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/state"
)

// This file keeps the output items of translated Responses API answers
// (messages and function calls, under the ids the gateway gave them) in the
// item store, and resolves a later request's {"type":"item_reference"}
// input items from it: the Vercel AI SDK's default openai(model) provider
// (store: true) sends its earlier answers that way. An item is kept as the
// input item a client would send in its place, scoped to the gateway key;
// resolving replaces the reference with it, in the translation and in the
// body an OpenAI target gets. A reference the store does not hold is left
// for the decoder: a route with an OpenAI target relays it there, any other
// refuses it in one line. Relayed answers are OpenAI's to keep.

// Bounds on what one request's references make the gateway do.
const (
	// maxItemRefs bounds the distinct item ids one request may reference.
	maxItemRefs = 4096
	// maxItemID is the longest id looked up; the gateway's are ~30 bytes.
	maxItemID = 128
	// keepTimeout bounds a store write after an answer.
	keepTimeout = 5 * time.Second
)

// itemScope is the prefix of the store keys of a request's items: with
// gateway keys, a hash of the key presented, so that no client can read
// another's items by guessing their ids.
func (s *Server) itemScope(r *http.Request) string {
	if !s.guard.NeedsKey() {
		return "-"
	}
	sum := sha256.Sum256([]byte("llmguard responses items\x00" + httpguard.PresentedKey(r)))
	return hex.EncodeToString(sum[:16])
}

func itemKey(scope, id string) string { return scope + "/" + id }

// rsRefs is the input of a request body, element by element, and the item
// ids its item_reference elements name.
type rsRefs struct {
	elems [][]byte
	ref   []string // per element, the id it references ("" for none)
	ids   []string // the distinct ids, in order
}

// inputRefs scans body's "input" for item_reference items; ok is false when
// there are none (or the body is not what the decoder accepts: it reports
// that itself).
func inputRefs(body []byte) (refs *rsRefs, ok bool) {
	if !bytes.Contains(body, []byte("item_reference")) {
		return nil, false
	}
	var input []byte
	if rawjson.EachField(body, func(k, v []byte) error {
		if string(k) == "input" {
			input = v
		}
		return nil
	}) != nil || len(input) == 0 || input[0] != '[' {
		return nil, false
	}
	refs = &rsRefs{}
	seen := map[string]bool{}
	err := rawjson.EachElement(input, func(el []byte) error {
		var typ, id string
		_ = rawjson.EachField(el, func(k, v []byte) error {
			switch string(k) {
			case "type":
				typ, _ = rawjson.String(v)
			case "id":
				id, _ = rawjson.String(v)
			}
			return nil
		})
		if typ != "item_reference" || id == "" || len(id) > maxItemID {
			id = ""
		} else if !seen[id] {
			seen[id] = true
			refs.ids = append(refs.ids, id)
		}
		refs.elems = append(refs.elems, el)
		refs.ref = append(refs.ref, id)
		return nil
	})
	return refs, err == nil && len(refs.ids) > 0
}

// resolveRefs returns body with each item_reference that names an item the
// store holds for the request's scope replaced by that item; the others stay. body comes
// back as it is when it references nothing; the result is never larger
// than the body limit.
func (s *Server) resolveRefs(r *http.Request, body []byte) ([]byte, *apiError) {
	refs, ok := inputRefs(body)
	if !ok {
		return body, nil
	}
	if len(refs.ids) > maxItemRefs {
		return nil, errBadRequest("invalid \"input\": more than " + strconv.Itoa(maxItemRefs) +
			" distinct item_reference ids; send the items' content instead")
	}
	scope := s.itemScope(r)
	keys := make([]string, len(refs.ids))
	for i, id := range refs.ids {
		keys[i] = itemKey(scope, id)
	}
	vals, err := s.items.GetItems(r.Context(), keys)
	if err != nil {
		return nil, &apiError{status: http.StatusServiceUnavailable, kind: kindAPI, retry: "true",
			message: classify.Line("the gateway's item store failed (resolving item_reference): " + err.Error())}
	}
	found := make(map[string][]byte, len(vals))
	for i, v := range vals {
		if v != nil {
			found[refs.ids[i]] = v
		}
	}
	if len(found) == 0 {
		return body, nil
	}
	input := []byte{'['}
	for i, el := range refs.elems {
		if i > 0 {
			input = append(input, ',')
		}
		if v, ok := found[refs.ref[i]]; ok {
			el = v
		}
		if int64(len(input)+len(el)) > s.maxBody {
			// One stored answer referenced again and again must not
			// grow a request past what a client may send.
			return nil, errTooLarge(s.maxBody)
		}
		input = append(input, el...)
	}
	input = append(input, ']')
	out, err := rawjson.Splice(nil, body, []rawjson.Field{{Key: "input", Value: input, Mode: rawjson.Replace}})
	if err != nil {
		return body, nil // the decoder reports the malformed body
	}
	if int64(len(out)) > s.maxBody {
		return nil, errTooLarge(s.maxBody)
	}
	return out, nil
}

// rsKeeper puts a translated answer's output items in the item store; a
// nil *rsKeeper keeps nothing.
type rsKeeper struct {
	s     *Server
	ctx   context.Context
	scope string
}

// keeper is the request's rsKeeper: nil when the client asked for
// "store": false (the Responses API's default is to store).
func (s *Server) keeper(r *http.Request, in *inbound) *rsKeeper {
	if p := in.req.Passthrough; p == nil || storeOff(p.Body) {
		return nil
	}
	return &rsKeeper{s: s, ctx: context.WithoutCancel(r.Context()), scope: s.itemScope(r)}
}

// storeOff reports whether a Responses request body says "store": false.
func storeOff(body []byte) bool {
	off := false
	_ = rawjson.EachField(body, func(k, v []byte) error {
		if string(k) == "store" {
			off = string(bytes.TrimSpace(v)) == "false"
		}
		return nil
	})
	return off
}

// keep stores items before the answer that names them goes out, so that
// the client's next request finds them. A failed write is logged: the
// answer is still good, a later reference to it gets the one-line 400.
func (k *rsKeeper) keep(items []*rsItem) {
	if k == nil || len(items) == 0 {
		return
	}
	batch := make([]state.Item, 0, len(items))
	for _, it := range items {
		batch = append(batch, state.Item{Key: itemKey(k.scope, it.id), Value: inputItem(it)})
	}
	ctx, cancel := context.WithTimeout(k.ctx, keepTimeout)
	defer cancel()
	if err := k.s.items.PutItems(ctx, batch); err != nil {
		k.s.log.Warn("gateway: keeping Responses items failed", "err", err.Error())
	}
}

// rsInputMessage and rsInputCall are an output item as a request's input
// carries it (no id: an OpenAI target must not look it up).
type rsInputMessage struct {
	Type    string         `json:"type"`
	Role    string         `json:"role"`
	Content []rsOutputText `json:"content"`
}

type rsOutputText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type rsInputCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// inputItem is it as the input item a client sends in place of a
// reference to it.
func inputItem(it *rsItem) []byte {
	var v any
	if it.call {
		v = rsInputCall{Type: "function_call", CallID: it.callID, Name: it.name, Arguments: it.text.String()}
	} else {
		v = rsInputMessage{Type: "message", Role: "assistant", Content: []rsOutputText{{Type: "output_text", Text: it.text.String()}}}
	}
	b, _ := json.Marshal(v) // plain strings: never fails
	return b
}
