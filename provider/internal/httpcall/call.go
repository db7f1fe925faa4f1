package httpcall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/httpbody"
	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
)

// MaxErrorBody is how much of a non-2xx body is read and classified.
const MaxErrorBody = 64 << 10

// MaxBody bounds a success body (32 MiB).
const MaxBody = 32 << 20

// Call identifies the upstream call for error reporting.
type Call struct {
	Provider string
	Model    string
	// Dropped names the request fields the encoder could not send; a
	// Stream puts them on its first chunk.
	Dropped []string
}

// Classify builds a *provider.Error from in, filling the provider name.
func (c Call) Classify(in classify.Input, err error) *provider.Error {
	in.Provider = c.Provider
	v := classify.Classify(in)
	if v.Class == "" {
		v.Class = classify.Unknown
	}
	if v.Scope == "" {
		v.Scope = classify.ScopeRequest
	}
	if v.Message == "" {
		switch {
		case err != nil:
			v.Message = classify.Redact(err.Error())
		case in.Status != 0:
			v.Message = fmt.Sprintf("%d %s", in.Status, http.StatusText(in.Status))
		default:
			v.Message = string(v.Class)
		}
	}
	pe := &provider.Error{Provider: c.Provider, Model: c.Model, Verdict: v, Err: err}
	if in.Status != 0 {
		pe.RateLimit = provider.ParseRateLimit(in.Header, time.Now())
	}
	return pe
}

// Invalid is the error for a request the adapter cannot send: it could not
// be encoded in this dialect (a tool result Gemini cannot name, an unknown
// tool_choice mode) or its URL is malformed. It is invalid_request with
// request scope; Fallback is true because another dialect may take it.
func (c Call) Invalid(err error) *provider.Error {
	msg := c.Provider + ": cannot send the request: " + classify.Redact(err.Error())
	if len(msg) > 200 {
		msg = msg[:197] + "..."
	}
	msg = strings.ReplaceAll(msg, "\n", " ")
	return &provider.Error{Provider: c.Provider, Model: c.Model, Err: err, Verdict: classify.Verdict{
		Class: classify.InvalidRequest, Scope: classify.ScopeRequest, Fallback: true, Message: msg}}
}

// Transport classifies a transport error (no response or no complete body).
// When ctx is done its error is kept in the chain so errors.Is(err,
// context.Canceled) holds.
func (c Call) Transport(ctx context.Context, h http.Header, err error) *provider.Error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w (%w)", err, cerr)
	}
	return c.Classify(classify.Input{Header: h, Err: err}, err)
}

// Do sends req (which carries ctx) and returns a 2xx response. Any other
// status is read (at most MaxErrorBody), closed and classified; a transport
// error is classified too. Both come back as *provider.Error.
func (c Call) Do(ctx context.Context, client *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, c.Transport(ctx, nil, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	resp.Body.Close()
	in := classify.Input{Status: resp.StatusCode, Header: resp.Header, Body: body}
	if rerr != nil && len(body) == 0 {
		// The status is known; the body broke. Classify on the status.
		return nil, c.Classify(in, rerr)
	}
	return nil, c.Classify(in, nil)
}

// Post sends the JSON body to url with the headers h (see NewRequest and
// Do); a request that cannot be built is the caller's (Invalid).
func (c Call) Post(ctx context.Context, client *http.Client, url string, body []byte, h Headers) (*http.Response, error) {
	hr, err := NewRequest(ctx, url, body, h)
	if err != nil {
		return nil, c.Invalid(err)
	}
	return c.Do(ctx, client, hr)
}

// ReadBody reads a success body (at most MaxBody) and closes it. A body that
// breaks off is a classified transport error.
func (c Call) ReadBody(ctx context.Context, resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	body, err := httpbody.Read(&io.LimitedReader{R: resp.Body, N: MaxBody}, resp.ContentLength, MaxBody)
	if err != nil {
		return nil, c.Transport(ctx, resp.Header, fmt.Errorf("reading response body: %w", err))
	}
	return body, nil
}

// Decode reads resp's success body (ReadBody) and decodes it with decode;
// a body that does not decode is a classified error (BadBody). The body is
// returned too, for an adapter that keeps it verbatim.
func Decode[T any](ctx context.Context, c Call, resp *http.Response, decode func([]byte) (T, error)) (T, []byte, error) {
	var zero T
	body, err := c.ReadBody(ctx, resp)
	if err != nil {
		return zero, nil, err
	}
	out, err := decode(body)
	if err != nil {
		return zero, body, c.BadBody(resp, body, err)
	}
	return out, body, nil
}

// Answer is an adapter's whole answer: resp's success body decoded
// (Decode), with the provider's name, the rate limit resp's headers
// announce, its request id (requestID, as the provider's header has it)
// and the request fields the call dropped. The body is returned too, for
// an adapter that keeps it verbatim.
func Answer(ctx context.Context, c Call, resp *http.Response, decode func([]byte) (*provider.Response, error), requestID string) (*provider.Response, []byte, error) {
	out, body, err := Decode(ctx, c, resp, decode)
	if err != nil {
		return nil, nil, err
	}
	out.Provider = c.Provider
	out.RateLimit = provider.ParseRateLimit(resp.Header, time.Now())
	out.RequestID = requestID
	out.Dropped = c.Dropped
	return out, body, nil
}

// BadBody classifies a 2xx body that could not be decoded (or that carries
// an error envelope): the classifier sees the status, headers and body.
func (c Call) BadBody(resp *http.Response, body []byte, err error) *provider.Error {
	if err != nil {
		err = fmt.Errorf("decoding %s response: %w", c.Provider, err)
	}
	return c.Classify(classify.Input{Status: resp.StatusCode, Header: resp.Header, Body: body}, err)
}

// ErrInBody is a 2xx body that carries an "error" object: a provider
// answering 200 with a failure.
var ErrInBody = errors.New("response carries an error")

// Unmarshal decodes a 2xx body into v; errField, v's "error" field, set to
// anything but null is ErrInBody.
func Unmarshal(body []byte, v any, errField *json.RawMessage) error {
	if err := rawjson.Unmarshal(body, v); err != nil {
		return err
	}
	if !rawjson.IsNull(*errField) {
		return ErrInBody
	}
	return nil
}

// Headers are the fixed headers of an adapter's requests, built once with
// canonical keys so that each request copies value slices instead of
// allocating them. The slices are shared and never modified.
type Headers http.Header

// NewHeaders returns Headers from name, value pairs (Content-Type:
// application/json is always included). Pairs with an empty value are skipped.
func NewHeaders(kv ...string) Headers {
	h := Headers{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			h[http.CanonicalHeaderKey(kv[i])] = []string{kv[i+1]}
		}
	}
	return h
}

// With returns a copy of h plus name: value.
func (h Headers) With(name, value string) Headers {
	out := make(Headers, len(h)+1)
	for k, v := range h {
		out[k] = v
	}
	out[http.CanonicalHeaderKey(name)] = []string{value}
	return out
}

// NewRequest builds a POST of the JSON body with the headers h.
func NewRequest(ctx context.Context, url string, body []byte, h Headers) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	return req, nil
}

// NewRequestParts is NewRequest of the body made of parts, sent one after
// another with its Content-Length set and never joined: a relayed request
// goes upstream as slices of its client's buffer (rawjson.SpliceParts), so
// a long prompt is not copied once more. The parts must not change until
// the request is done; the transport may send them again (GetBody). hold,
// when not nil, guards the buffer the parts lie in (provider.Hold): each
// body the transport reads acquires it, and releases it once closed, which
// the transport does when it has sent the body (possibly after the answer
// came back) or given up on it. When hold cannot be acquired (the buffer
// has been reused) the request is not made.
func NewRequestParts(ctx context.Context, url string, parts [][]byte, hold provider.Hold, h Headers) (*http.Request, error) {
	if hold == nil && len(parts) <= 1 {
		var body []byte
		if len(parts) == 1 {
			body = parts[0]
		}
		return NewRequest(ctx, url, body, h)
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	body, err := newPartsBody(parts, hold)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		body.Close()
		return nil, err
	}
	req.ContentLength = int64(n)
	req.GetBody = func() (io.ReadCloser, error) { return newPartsBody(parts, hold) }
	for k, v := range h {
		req.Header[k] = v
	}
	return req, nil
}

// PostParts is Post of a body made of parts (see NewRequestParts).
func (c Call) PostParts(ctx context.Context, client *http.Client, url string, parts [][]byte, hold provider.Hold, h Headers) (*http.Response, error) {
	hr, err := NewRequestParts(ctx, url, parts, hold, h)
	if err != nil {
		return nil, c.Invalid(err)
	}
	return c.Do(ctx, client, hr)
}

// MergeExtra returns body (a JSON object) with extra's keys added. A key in
// extra replaces the canonical encoding of the same key, except the keys in
// keep, which the adapter controls (model, stream...).
func MergeExtra(body []byte, extra map[string]json.RawMessage, keep ...string) ([]byte, error) {
	if len(extra) == 0 {
		return body, nil
	}
	var m map[string]json.RawMessage
	if err := rawjson.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	for k, v := range extra {
		if !slices.Contains(keep, k) {
			m[k] = v
		}
	}
	return json.Marshal(m)
}

// FirstHeader returns the first non-empty header among names, given in
// canonical form (http.Header.Get allocates to canonicalise any other).
func FirstHeader(h http.Header, names ...string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// KnownPart reports whether p has a canonical type with its payload set.
func KnownPart(p *provider.Part) bool {
	switch p.Type {
	case provider.PartText:
		return true
	case provider.PartImage:
		return p.Image != nil
	case provider.PartToolCall:
		return p.ToolCall != nil
	case provider.PartToolResult:
		return p.ToolResult != nil
	}
	return false
}

// RawPart is the verbatim form of a part the canonical form does not hold
// (an Anthropic thinking or document block, an OpenAI input_audio part): its
// type plus its Extra fields, for an adapter of the dialect it came from.
func RawPart(p *provider.Part) (json.RawMessage, error) {
	typ, err := json.Marshal(p.Type)
	if err != nil {
		return nil, err
	}
	return MergeExtra(append(append([]byte(`{"type":`), typ...), '}'), p.Extra)
}

// ErrNotModelList is the decoding error of a 2xx model-list body that lacks
// the list.
var ErrNotModelList = errors.New("body is not a model list")

// ListModels GETs url with the headers h (but no Content-Type) and returns
// the idKey string of every element of the body's listKey array, e.g.
// "data"/"id" (OpenAI, Anthropic) or "models"/"name" (Gemini). An element
// without idKey gives "". Failures, including a 2xx body that is not such a
// list, are classified *provider.Error values.
func (c Call) ListModels(ctx context.Context, client *http.Client, url string, h Headers, listKey, idKey string) ([]string, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Provider, err)
	}
	for k, v := range h {
		if k != "Content-Type" {
			hr.Header[k] = v
		}
	}
	resp, err := c.Do(ctx, client, hr)
	if err != nil {
		return nil, err
	}
	body, err := c.ReadBody(ctx, resp)
	if err != nil {
		return nil, err
	}
	ids, err := modelIDs(body, listKey, idKey)
	if err != nil {
		return nil, c.BadBody(resp, body, err)
	}
	return ids, nil
}

func modelIDs(body []byte, listKey, idKey string) ([]string, error) {
	var top map[string]json.RawMessage
	if err := rawjson.Unmarshal(body, &top); err != nil {
		return nil, err
	}
	var items []map[string]json.RawMessage
	if err := rawjson.Unmarshal(top[listKey], &items); err != nil || items == nil {
		if err == nil || top[listKey] == nil {
			err = ErrNotModelList
		}
		return nil, err
	}
	out := make([]string, len(items))
	for i, it := range items {
		if raw, ok := it[idKey]; ok {
			if err := rawjson.Unmarshal(raw, &out[i]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
