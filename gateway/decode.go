package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// decodeRequest walks the top-level fields of a request body once. field
// decodes the fields of the dialect and reports whether it knew the key;
// the fields both dialects share (model, temperature, top_p, stream), the
// gateway's per-request routing (fallbacks, then OpenRouter's models) and
// unknown fields, kept verbatim in Request.Extra, are handled here.
func decodeRequest(body []byte, in *inbound, field func(k string, v json.RawMessage) (known bool, err error)) error {
	r := in.req
	var models []string
	err := eachField(body, func(k string, v json.RawMessage) error {
		known, err := field(k, v)
		if !known {
			switch k {
			case "model":
				in.model, err = rawjson.String(v)
			case "temperature":
				err = unmarshalFloat(v, &r.Temperature)
			case "top_p":
				err = unmarshalFloat(v, &r.TopP)
			case "stream":
				err = unmarshalBool(v, &r.Stream)
			case "fallbacks":
				in.fallbacks, err = stringOrList(v)
			case "models":
				models, err = stringOrList(v)
			default:
				if !rawjson.Valid(v) {
					return badRequest("invalid %q: malformed JSON", k)
				}
				setExtra(&r.Extra, k, v)
			}
		}
		if err != nil {
			return badRequest("invalid %q: %v", k, err)
		}
		return nil
	})
	if err != nil {
		if _, ok := err.(*requestError); ok {
			return err
		}
		return badRequest("request body is not a JSON object: %v", err)
	}
	if in.model == "" && len(models) > 0 {
		// OpenRouter accepts "models" alone: the first is the primary.
		in.model, models = models[0], models[1:]
	}
	in.fallbacks = append(in.fallbacks, models...)
	if in.model == "" {
		return badRequest("missing \"model\"")
	}
	if len(r.Messages) == 0 {
		return badRequest("missing \"messages\"")
	}
	return nil
}

// decodeContent decodes message content in either dialect: null (no parts),
// a string (one text part) or an array of typed objects. For each object,
// block decodes the fields of its type into p, deleting the keys it used;
// the keys left over are kept verbatim in p.Extra, so a same-dialect target
// receives them unchanged. noun names an element in errors ("block", "part").
func decodeContent(v json.RawMessage, noun string, block func(typ string, obj map[string]json.RawMessage, p *provider.Part) error) ([]provider.Part, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil, nil
	}
	if v[0] == '"' {
		s, err := rawjson.String(v)
		if err != nil {
			return nil, err
		}
		return []provider.Part{{Type: provider.PartText, Text: s}}, nil
	}
	raw, err := objects(v)
	if err != nil {
		return nil, err
	}
	parts := make([]provider.Part, 0, len(raw))
	for _, obj := range raw {
		var typ string
		_ = json.Unmarshal(obj["type"], &typ)
		delete(obj, "type")
		p := provider.Part{Type: typ}
		if err := block(typ, obj, &p); err != nil {
			return nil, fmt.Errorf("%s %s: %w", typ, noun, err)
		}
		if len(obj) > 0 {
			p.Extra = obj
		}
		parts = append(parts, p)
	}
	return parts, nil
}
