package openai

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// Defaults used when a Config field is empty.
const (
	DefaultBaseURL    = "https://api.openai.com/v1"
	DefaultAPIVersion = "2024-10-21" // Azure's api-version
)

// Config configures an Adapter. The zero value of each field means its
// documented default.
type Config struct {
	// Name is the provider name reported in errors and responses and the
	// name the classifier gets (default "openai"). It also selects the
	// dialect quirks: "openai" sends max_completion_tokens and metadata,
	// "mistral" does not send stream_options, "azure" uses Azure's URL and
	// api-key header.
	Name string
	// BaseURL is the API root including its version path, as the SDKs take
	// it (default DefaultBaseURL); the adapter posts to
	// {BaseURL}/chat/completions. For Azure it is the resource endpoint
	// (https://NAME.openai.azure.com) and the adapter posts to
	// {BaseURL}/openai/deployments/{model}/chat/completions?api-version=...
	BaseURL string
	// APIKey is sent as "Authorization: Bearer" (Azure: "api-key"). Empty
	// sends no key (local servers).
	APIKey string
	// Azure selects Azure OpenAI's URL scheme and auth; the request's model
	// is the deployment name. Name "azure" implies it.
	Azure bool
	// APIVersion is Azure's api-version (default DefaultAPIVersion).
	APIVersion string
	// Model is used when a request names none (for Azure, the deployment).
	Model string
	// Responses says the API serves OpenAI's Responses API at
	// {BaseURL}/responses, so requests that arrived in it are relayed
	// unchanged (see provider.Passthrough). Name "openai" implies it; false
	// otherwise (they are translated to Chat Completions).
	Responses bool
	// Client sends the requests (default: a new provider.NewHTTPClient(nil);
	// pass the process's shared client to pool connections).
	Client *http.Client
}

// Adapter speaks OpenAI Chat Completions and the compatible family
// (deepseek, mistral, groq, openrouter, xai, together, fireworks, any
// openai-compatible server, Azure). It is safe for concurrent use; create
// it with New.
type Adapter struct {
	name, base, apiVersion, model string
	chatURL                       string // base + "/chat/completions" (not Azure's)
	azure, responses              bool
	q                             quirks
	hdr, hdrStream                httpcall.Headers
	client                        *http.Client
}

// quirks are the per-provider differences of the dialect.
type quirks struct {
	maxCompletionTokens bool // send max_completion_tokens instead of max_tokens
	metadata            bool // the API accepts the metadata object
	noStreamOptions     bool // the API rejects stream_options
	// verbatim: the answers are OpenAI's own shape, fit to relay unchanged
	// to an OpenAI client (compatible servers' quirks, such as content as
	// an array of parts or their own finish reasons, are not).
	verbatim bool
}

func quirksFor(name string) quirks {
	switch name {
	case "openai":
		return quirks{maxCompletionTokens: true, metadata: true, verbatim: true}
	case "azure":
		return quirks{verbatim: true}
	case "mistral":
		return quirks{noStreamOptions: true}
	}
	return quirks{}
}

// New returns an Adapter for cfg (nil means all defaults).
func New(cfg *Config) *Adapter {
	c := defaults.Copy(cfg)
	c.Name = cmp.Or(c.Name, "openai")
	if c.Name == "azure" {
		c.Azure = true
	}
	if c.BaseURL == "" && !c.Azure {
		c.BaseURL = DefaultBaseURL
	}
	c.APIVersion = cmp.Or(c.APIVersion, DefaultAPIVersion)
	if c.Client == nil {
		c.Client = provider.NewHTTPClient(nil)
	}
	var hdr httpcall.Headers
	switch {
	case c.APIKey == "":
		hdr = httpcall.NewHeaders()
	case c.Azure:
		hdr = httpcall.NewHeaders("api-key", c.APIKey)
	default:
		hdr = httpcall.NewHeaders("Authorization", "Bearer "+c.APIKey)
	}
	base := strings.TrimRight(c.BaseURL, "/")
	return &Adapter{name: c.Name, base: base, chatURL: base + "/chat/completions",
		apiVersion: c.APIVersion, model: c.Model, azure: c.Azure, q: quirksFor(c.Name),
		responses: (c.Responses || c.Name == "openai") && !c.Azure,
		hdr:       hdr.With("Accept", "application/json"), hdrStream: hdr.With("Accept", "text/event-stream"), client: c.Client}
}

// Name implements provider.Adapter.
func (a *Adapter) Name() string { return a.name }

func (a *Adapter) endpoint(model string) string {
	if a.azure {
		return a.base + "/openai/deployments/" + url.PathEscape(model) +
			"/chat/completions?api-version=" + url.QueryEscape(a.apiVersion)
	}
	return a.chatURL // built once: a request's URL costs no allocation
}

func (a *Adapter) send(ctx context.Context, req *provider.Request, stream bool) (*http.Response, httpcall.Call, error) {
	model := cmp.Or(req.Model, a.model)
	call := httpcall.Call{Provider: a.name, Model: model}
	parts, dropped, err := encodeParts(req, model, stream, a.q) // slices of the client's body, where it can
	call.Dropped = dropped
	var hold provider.Hold // the parts are slices of the client's body, relayed or translated (Part.Raw)
	if req.Passthrough != nil {
		hold = req.Passthrough.Hold
	}
	if err != nil {
		return nil, call, call.Invalid(fmt.Errorf("encoding: %w", err))
	}
	hdr := a.hdr
	if stream {
		hdr = a.hdrStream
	}
	resp, err := call.PostParts(ctx, a.client, a.endpoint(model), parts, hold, hdr)
	return resp, call, err
}

// requestID picks the provider's request id header.
func requestID(h http.Header) string {
	return httpcall.FirstHeader(h, "X-Request-Id", "Apim-Request-Id", "Request-Id", "X-Generation-Id")
}

// Chat implements provider.Adapter.
func (a *Adapter) Chat(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	if a.relayed(req) {
		return a.chatResponses(ctx, req)
	}
	resp, call, err := a.send(ctx, req, false)
	if err != nil {
		return nil, err
	}
	out, body, err := httpcall.Answer(ctx, call, resp, Decode, requestID(resp.Header))
	if err != nil {
		return nil, err
	}
	if a.q.verbatim && chatRelayed(req) {
		out.Raw = body // OpenAI's own answer to its client's own request
	}
	return out, nil
}

// Stream implements provider.Adapter.
func (a *Adapter) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	if a.relayed(req) {
		return a.streamResponses(ctx, req)
	}
	resp, call, err := a.send(ctx, req, true)
	if err != nil {
		return nil, err
	}
	dec := &decoder{call: call, h: resp.Header, relay: a.q.verbatim && chatRelayed(req)}
	if dec.relay && req.Assemble {
		dec.log = &completionLog{}
	}
	return call.OpenStream(ctx, resp, dec, requestID(resp.Header))
}

var errNoChoices = fmt.Errorf("response has no choices")

// Decode parses a chat.completion body into a canonical Response (Provider
// and RequestID are left for the caller). A body without choices, or one
// carrying an "error" object or finish_reason "error" (OpenRouter), is an
// error.
func Decode(body []byte) (*provider.Response, error) {
	var r wireResponse
	if err := httpcall.Unmarshal(body, &r, &r.Error); err != nil {
		return nil, err
	}
	if len(r.Choices) == 0 {
		return nil, errNoChoices
	}
	c := r.Choices[0]
	if c.FinishReason == "error" {
		return nil, httpcall.ErrInBody
	}
	out := &provider.Response{ID: r.ID, Model: r.Model, Text: string(c.Message.Content),
		FinishReason: finish(c.FinishReason)}
	if r.Usage != nil {
		out.Usage = *r.usage()
	}
	for _, tc := range c.Message.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, provider.ToolCall{ID: tc.ID, Name: tc.Function.Name,
			Arguments: argsJSON(tc.Function.Arguments)})
	}
	if out.Text == "" && c.Message.Refusal != "" {
		out.Text = c.Message.Refusal
	}
	return out, nil
}

// argsJSON turns OpenAI's arguments string into a JSON object; text that is
// not JSON is kept as a JSON string so nothing is lost.
func argsJSON(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// finish maps an OpenAI finish_reason to the canonical one. Unknown reasons
// pass through unchanged.
func finish(r string) string {
	switch r {
	case "stop", "end_turn", "eos":
		return provider.FinishStop
	case "length", "max_tokens":
		return provider.FinishLength
	case "tool_calls", "function_call":
		return provider.FinishToolCalls
	case "content_filter":
		return provider.FinishFiltered
	}
	return r
}
