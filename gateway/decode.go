package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// decodeDialect decodes a chat body of dialect into in (a fresh Request):
// whole, or with relay only what decodeChat reads, leaving the messages
// and the fields in later for the Deferred (deferField). field decodes the
// dialect's own fields (decodeRequest's field).
func decodeDialect(body []byte, in *inbound, relay bool, dialect string, later []string,
	field func(in *inbound, k string, v json.RawMessage) (known bool, err error)) error {
	in.dialect, in.req = dialect, &provider.Request{Dialect: dialect}
	return decodeRequest(body, in, func(k string, v json.RawMessage) (bool, error) {
		if relay {
			if known, err := deferField(in, k, v, later...); known {
				return known, err
			}
		}
		return field(in, k, v)
	})
}

// decodeRequest walks the top-level fields of a request body once. field
// decodes the fields of the dialect and reports whether it knew the key;
// the fields both dialects share (model, temperature, top_p, stream), the
// gateway's per-request routing (fallbacks, then OpenRouter's models) and
// unknown fields, kept verbatim in Request.Extra, are handled here. The
// body less the routing fields becomes the Request's Passthrough, which an
// adapter of the dialect sends on byte for byte.
func decodeRequest(body []byte, in *inbound, field func(k string, v json.RawMessage) (known bool, err error)) error {
	r := in.req
	var models []string
	routing := false // the body has llmguard's own fields
	if rawjson.IsNull(body) {
		return decodeFault(body, errNotObject)
	}
	visit := func(k string, v []byte) error {
		known, err := field(k, v)
		if !known {
			switch k {
			case "model":
				if in.model, err = rawjson.String(v); err != nil {
					return typeError(k, "a string", v)
				}
			case "temperature":
				err = unmarshalFloat(v, &r.Temperature)
			case "top_p":
				err = unmarshalFloat(v, &r.TopP)
			case "stream":
				err = unmarshalBool(v, &r.Stream)
			case "fallbacks":
				if in.dialect == DialectAnthropic && anthropicFallbacks(v) {
					setExtra(&r.Extra, k, v) // the API's own server-side fallbacks
					return nil
				}
				routing = true
				if in.fallbacks, err = stringOrList(v); err != nil {
					return typeError(k, "a model name or an array of model names", v)
				}
			case "models":
				routing = true
				if models, err = stringOrList(v); err != nil {
					return typeError(k, "an array of model names", v)
				}
			default:
				if !rawjson.Valid(v) {
					return errSyntax
				}
				setExtra(&r.Extra, k, v)
			}
		}
		if err != nil {
			return userError(k, err)
		}
		return nil
	}
	ms, err := walkFields(body, in.known, visit)
	if err != nil {
		return decodeFault(body, err)
	}
	if in.model == "" && len(models) > 0 {
		// OpenRouter accepts "models" alone: the first is the primary.
		in.model, models = models[0], models[1:]
	}
	in.fallbacks = append(in.fallbacks, models...)
	if in.model == "" {
		return badRequest("missing \"model\" (a string: a route, provider/model or a model id)")
	}
	if len(r.Messages) == 0 && !in.messages {
		return badRequest("missing \"messages\" (an array of messages)")
	}
	raw := body
	if routing {
		raw, err = rawjson.Splice(nil, body, []rawjson.Field{
			{Key: "fallbacks", Mode: rawjson.Delete}, {Key: "models", Mode: rawjson.Delete}})
		if err != nil {
			return decodeFault(body, err)
		}
		ms = nil // they were body's
	}
	r.Passthrough = &provider.Passthrough{Dialect: in.dialect, Body: raw, Fields: ms}
	return nil
}

// walkFields calls visit with each top-level field of body and returns
// where each lies: one walk reads the fields and keeps their places, for
// the adapter that relays the body (Passthrough.Fields) and for the whole
// decoding of a relay decoding's body, which then walks it no more (known,
// when set, are those places).
func walkFields(body []byte, known []rawjson.Member, visit func(k string, v []byte) error) ([]rawjson.Member, error) {
	if known == nil {
		return rawjson.Members(body, func(key, v []byte) error { return visit(keyString(key), v) })
	}
	for _, m := range known {
		if err := visit(m.Key, body[m.Value:m.End]); err != nil {
			return nil, err
		}
	}
	return known, nil
}

// anthropicFallbacks reports whether a "fallbacks" value on /v1/messages is
// the Messages API's own (server-side fallback models: "default" or an
// array of objects) rather than llmguard's list of route or model names.
func anthropicFallbacks(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	if string(v) == `"default"` {
		return true
	}
	found := false
	_ = rawjson.EachElement(v, func(el []byte) error {
		found = found || (len(el) > 0 && el[0] == '{')
		return nil
	})
	return found
}

// decodeContent decodes message content in either dialect: null (no parts),
// a string (one text part) or an array of typed objects. For each object,
// block decodes the fields of its type into p, deleting the keys it used;
// the keys left over are kept verbatim in p.Extra, so a same-dialect target
// receives them unchanged. An element of an unknown type is kept whole.
// With lean, a string's text may be left undecoded (see textPart).
func decodeContent(v json.RawMessage, lean bool, block func(typ string, obj map[string]json.RawMessage, p *provider.Part) error) ([]provider.Part, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil, nil
	}
	if v[0] == '"' {
		p := provider.Part{Type: provider.PartText}
		if err := textPart(&p, v, lean); err != nil {
			return nil, err
		}
		return []provider.Part{p}, nil
	}
	if v[0] != '[' {
		return nil, typeError("", "a string or an array of content blocks", v)
	}
	raw, err := objects(v)
	if err != nil {
		return nil, typeError("", "an array of content blocks (objects with a type)", v)
	}
	parts := make([]provider.Part, 0, len(raw))
	for i, obj := range raw {
		var typ string
		if t, ok := obj["type"]; ok {
			if typ, err = rawjson.String(t); err != nil {
				return nil, typeError(fmt.Sprintf("[%d].type", i), "a string", t)
			}
		}
		delete(obj, "type")
		p := provider.Part{Type: typ}
		if err := block(typ, obj, &p); err != nil {
			return nil, prefixError(fmt.Sprintf("[%d]", i), err)
		}
		if len(obj) > 0 {
			p.Extra = obj
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// textPart sets p's text to the JSON string v: with lean, left undecoded
// in p.Raw where the string can be sent on as it is (rawjson.Verbatim), so
// that a request translated to another dialect carries its client's text
// unchanged (see provider.Request.Lean); else decoded into p.Text.
func textPart(p *provider.Part, v []byte, lean bool) (err error) {
	if lean && rawjson.Verbatim(v) {
		p.Raw = v
		return nil
	}
	p.Text, err = rawjson.String(v)
	return err
}

// partText is p's text, decoded from p.Raw when it is there.
func partText(p *provider.Part) string {
	if p.Raw == nil {
		return p.Text
	}
	s, _ := rawjson.String(p.Raw) // Verbatim: it decodes
	return s
}

// ---- errors in the user's terms ----

// errSyntax marks a value that is not JSON; decodeFault then reports the
// body's syntax error.
var errSyntax = errors.New("malformed JSON")

// fieldError is a request field whose value has the wrong type.
type fieldError struct{ path, want, got string }

func (e *fieldError) Error() string {
	return fmt.Sprintf("invalid %q: expected %s, got %s", e.path, e.want, e.got)
}

// typeError is the error for the value v at path, which should be want
// ("a string", "an array of messages").
func typeError(path, want string, v []byte) error {
	return &fieldError{path: path, want: want, got: jsonKind(v)}
}

// jsonKind names the kind of a JSON value as a user would.
func jsonKind(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// prefixError puts prefix before the path of err's field (a *fieldError or
// a *json.UnmarshalTypeError), or before its message.
func prefixError(prefix string, err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return &fieldError{path: joinPath(prefix, fe.path), want: fe.want, got: fe.got}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &fieldError{path: joinPath(prefix, te.Field), want: goKind(te.Type), got: article(te.Value)}
	}
	if errors.Is(err, errSyntax) || errors.Is(err, rawjson.ErrMalformed) {
		return err
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return errSyntax
	}
	var re *requestError
	if errors.As(err, &re) {
		return err
	}
	return &requestError{msg: fmt.Sprintf("invalid %q: %v", prefix, err)}
}

// userError is prefixError for a top-level key.
func userError(key string, err error) error { return prefixError(key, err) }

func joinPath(prefix, path string) string {
	switch {
	case path == "":
		return prefix
	case prefix == "" || strings.HasPrefix(path, "["):
		return prefix + path
	}
	return prefix + "." + path
}

// goKind names a Go type's JSON kind as a user would.
func goKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return goKind(t.Elem())
	}
	return "another type"
}

// article turns encoding/json's value kind ("string", "number 1.5") into
// "a string", "a number".
func article(v string) string {
	v, _, _ = strings.Cut(v, " ")
	switch v {
	case "object", "array":
		return "an " + v
	case "bool":
		return "a boolean"
	case "":
		return "another type"
	}
	return "a " + v
}

// decodeFault is the 400 for a body that failed to decode: its syntax
// error when it is not JSON, else the field at fault.
func decodeFault(body []byte, err error) error {
	if !rawjson.Valid(body) {
		var v any
		serr := rawjson.Unmarshal(body, &v)
		var se *json.SyntaxError
		if errors.As(serr, &se) {
			return badRequest("request body is not valid JSON: %v (at byte %d)", se, se.Offset)
		}
		if serr != nil {
			return badRequest("request body is not valid JSON: %v", serr)
		}
	}
	if errors.Is(err, errNotObject) || rawjson.IsNull(body) || len(bytes.TrimSpace(body)) > 0 && bytes.TrimSpace(body)[0] != '{' {
		return badRequest("request body must be a JSON object, got %s", jsonKind(body))
	}
	var fe *fieldError
	var re *requestError
	switch {
	case errors.As(err, &fe):
		return badRequest("%s", fe.Error())
	case errors.As(err, &re):
		return re
	}
	return badRequest("invalid request: %v", err)
}

// notObjectFault is the 400 for a body the embeddings and Responses
// decoders could not walk: a field's own 400 as it is, else "not a JSON
// object".
func notObjectFault(err error) error {
	if _, ok := err.(*requestError); ok {
		return err
	}
	return badRequest("request body is not a JSON object: %v", err)
}
