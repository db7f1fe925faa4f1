package openai

import (
	"errors"
	"strconv"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// chatRelayed reports whether req carries its client's Chat Completions body.
func chatRelayed(req *provider.Request) bool {
	return req.Passthrough != nil && req.Passthrough.Dialect == Dialect && req.Dialect == Dialect
}

// splice is the client's own body with the fields the adapter controls set:
// model, stream and stream_options (usage is always asked for, where the
// provider takes the option), and the provider's quirks (max_tokens for a
// provider that lacks max_completion_tokens, no metadata where it is
// refused). The body is the parts to send in turn, slices of the client's
// buffer around the fields set (rawjson.SpliceParts).
func splice(req *provider.Request, model string, stream bool, q quirks) ([][]byte, []string, error) {
	pt := req.Passthrough
	if pt.Hold != nil {
		// The body is read here (its stream_options, its fields when not
		// known), maybe by an attempt that outlived its request.
		if !pt.Hold.Acquire() {
			return nil, nil, errBodyReused
		}
		defer pt.Hold.Release()
	}
	ms := pt.Fields
	if ms == nil {
		var err error
		if ms, err = rawjson.Members(pt.Body, nil); err != nil {
			return nil, nil, err
		}
	}
	m := json.AppendEscape(make([]byte, 0, len(model)+2), model, 0)
	fields := []rawjson.Field{{Key: "model", Value: m}}
	if stream {
		fields = append(fields, rawjson.Field{Key: "stream", Value: []byte("true")})
		if q.noStreamOptions {
			fields = append(fields, rawjson.Field{Key: "stream_options", Mode: rawjson.Delete})
		} else if !includesUsage(pt.Body, ms) {
			fields = append(fields, rawjson.Field{Key: "stream_options", Value: []byte(`{"include_usage":true}`)})
		}
	} else {
		fields = append(fields, rawjson.Field{Key: "stream", Value: []byte("false"), Mode: rawjson.Replace},
			rawjson.Field{Key: "stream_options", Mode: rawjson.Delete})
	}
	var dropped []string
	if req.MaxTokens > 0 {
		// One limit, under the name the provider takes (OpenAI's reasoning
		// models refuse max_tokens; most compatible servers know only it).
		// The canonical MaxTokens is max_tokens, or max_completion_tokens
		// when the client sent only that.
		name, other := "max_tokens", "max_completion_tokens"
		if q.maxCompletionTokens {
			name, other = other, name
		}
		fields = append(fields, rawjson.Field{Key: other, Mode: rawjson.Delete},
			rawjson.Field{Key: name, Value: strconv.AppendInt(nil, int64(req.MaxTokens), 10)})
	}
	if !q.metadata && len(req.Metadata) > 0 {
		fields = append(fields, rawjson.Field{Key: "metadata", Mode: rawjson.Delete})
		dropped = []string{"metadata"}
	}
	return rawjson.SpliceParts(pt.Body, ms, fields), dropped, nil
}

// errBodyReused is splice's error for a body whose buffer the gateway has
// reused (provider.Hold): only an attempt that outlived its request, such
// as a hedge that lost, meets it.
var errBodyReused = errors.New("request body no longer held: the request is done")

// includesUsage reports whether a request body's stream_options asks for
// usage (ms are the body's fields).
func includesUsage(body []byte, ms []rawjson.Member) bool {
	found := false
	for _, m := range ms {
		if m.Key == "stream_options" {
			_ = rawjson.EachField(body[m.Value:m.End], func(k, v []byte) error {
				found = found || (string(k) == "include_usage" && string(v) == "true")
				return nil
			})
		}
	}
	return found
}
