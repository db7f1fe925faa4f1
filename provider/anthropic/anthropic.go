package anthropic

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/internal/rawjson"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// Defaults used when a Config field is empty.
const (
	DefaultBaseURL   = "https://api.anthropic.com"
	DefaultVersion   = "2023-06-01"
	DefaultMaxTokens = 4096
)

// Config configures an Adapter. The zero value of each field means its
// documented default.
type Config struct {
	// Name is the provider name reported in errors and responses (default "anthropic").
	Name string
	// BaseURL is the API root without /v1 (default DefaultBaseURL); the
	// adapter posts to {BaseURL}/v1/messages.
	BaseURL string
	// APIKey is sent as x-api-key. Empty sends no key.
	APIKey string
	// Version is the anthropic-version header (default DefaultVersion).
	Version string
	// Model is used when a request names none.
	Model string
	// Client sends the requests (default: a new provider.NewHTTPClient(nil);
	// pass the process's shared client to pool connections).
	Client *http.Client
}

// Adapter speaks the Anthropic Messages API. It is safe for concurrent use;
// create it with New.
type Adapter struct {
	name, url, model string
	hdr, hdrStream   httpcall.Headers
	client           *http.Client
}

// New returns an Adapter for cfg (nil means all defaults).
func New(cfg *Config) *Adapter {
	c := defaults.Copy(cfg)
	c.Name = cmp.Or(c.Name, "anthropic")
	c.BaseURL = cmp.Or(c.BaseURL, DefaultBaseURL)
	c.Version = cmp.Or(c.Version, DefaultVersion)
	if c.Client == nil {
		c.Client = provider.NewHTTPClient(nil)
	}
	hdr := httpcall.NewHeaders("x-api-key", c.APIKey, "anthropic-version", c.Version)
	return &Adapter{name: c.Name, url: strings.TrimRight(c.BaseURL, "/") + "/v1/messages", model: c.Model,
		hdr: hdr.With("Accept", "application/json"), hdrStream: hdr.With("Accept", "text/event-stream"), client: c.Client}
}

// Relays implements provider.Relayer: the adapter sends a Messages API
// body of its client unchanged but for model, stream and max_tokens.
func (a *Adapter) Relays(dialect string) bool { return dialect == Dialect }

// Name implements provider.Adapter.
func (a *Adapter) Name() string { return a.name }

func (a *Adapter) send(ctx context.Context, req *provider.Request, stream bool) (*http.Response, httpcall.Call, error) {
	model := cmp.Or(req.Model, a.model)
	call := httpcall.Call{Provider: a.name, Model: model}
	var parts [][]byte
	var hold provider.Hold
	var err error
	if relayed(req) {
		parts, err = splice(req.Passthrough, model, stream) // slices of the client's body
		hold = req.Passthrough.Hold
	} else {
		var body []byte
		body, call.Dropped, err = encode(req, model, stream)
		parts = [][]byte{body}
	}
	if err != nil {
		return nil, call, call.Invalid(fmt.Errorf("encoding: %w", err))
	}
	hdr := a.hdr
	if stream {
		hdr = a.hdrStream
	}
	hr, err := httpcall.NewRequestParts(ctx, a.url, parts, hold, hdr)
	if err != nil {
		return nil, call, call.Invalid(err)
	}
	if req.Dialect == Dialect {
		passHeaders(hr.Header, req.Headers)
	}
	resp, err := call.Do(ctx, a.client, hr)
	return resp, call, err
}

// Chat implements provider.Adapter.
func (a *Adapter) Chat(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	resp, call, err := a.send(ctx, req, false)
	if err != nil {
		return nil, err
	}
	out, body, err := httpcall.Answer(ctx, call, resp, Decode, resp.Header.Get("Request-Id"))
	if err != nil {
		return nil, err
	}
	if relayed(req) {
		out.Raw = body // the Messages API's answer to its client's own request
	}
	return out, nil
}

// Stream implements provider.Adapter.
func (a *Adapter) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	resp, call, err := a.send(ctx, req, true)
	if err != nil {
		return nil, err
	}
	dec := &decoder{call: call, h: resp.Header, tools: map[int]int{}, relay: relayed(req)}
	if dec.relay && req.Assemble {
		dec.log = &messageLog{}
	}
	return call.OpenStream(ctx, resp, dec, resp.Header.Get("Request-Id"))
}

// passThrough lists the request headers of an Anthropic client that are sent
// on to an Anthropic target (canonical key -> lower-case key in
// provider.Request.Headers). Authentication and version headers are the
// adapter's own and never come from a request.
var passThrough = [...][2]string{{"Anthropic-Beta", "anthropic-beta"}}

// passHeaders sets the allow-listed headers of hs on h.
func passHeaders(h http.Header, hs map[string]string) {
	if len(hs) == 0 {
		return
	}
	for _, p := range passThrough {
		if v := hs[p[1]]; v != "" && !strings.ContainsAny(v, "\r\n") {
			h[p[0]] = []string{v}
		}
	}
}

var errNotMessage = fmt.Errorf("body is not a message")

// Decode parses a Messages API response body into a canonical Response
// (Provider and RequestID are left for the caller). A body that is not a
// message (an error envelope, HTML, truncated JSON) is an error.
func Decode(body []byte) (*provider.Response, error) {
	var m wireResponse
	if err := rawjson.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	if m.Type != "message" && (m.Type != "" || m.Content == nil) {
		return nil, errNotMessage
	}
	out := &provider.Response{ID: m.ID, Model: m.Model, FinishReason: finish(m.StopReason),
		StopSequence: m.StopSequence, Usage: m.Usage.canonical()}
	var text strings.Builder
	for i := range m.Content {
		b := &m.Content[i]
		switch b.Type {
		case provider.PartThinking, provider.PartRedactedThinking:
			out.Thinking = append(out.Thinking, b.thinkingPart())
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			args := b.Input
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage("{}")
			}
			out.ToolCalls = append(out.ToolCalls, provider.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	out.Text = text.String()
	return out, nil
}

// finish maps an Anthropic stop_reason to the canonical finish reason.
// Unknown reasons pass through unchanged.
func finish(r string) string {
	switch r {
	case "end_turn", "stop_sequence", "pause_turn":
		return provider.FinishStop
	case "max_tokens", "model_context_window_exceeded":
		return provider.FinishLength
	case "tool_use":
		return provider.FinishToolCalls
	case "refusal":
		return provider.FinishFiltered
	}
	return r
}
