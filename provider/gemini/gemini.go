package gemini

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/internal/defaults"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

// DefaultBaseURL is the Gemini API root; the adapter appends
// /v1beta/models/{model}:generateContent.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// Config configures an Adapter. The zero value of each field means its
// documented default.
type Config struct {
	// Name is the provider name reported in errors and responses (default "gemini").
	Name string
	// BaseURL is the API root without /v1beta (default DefaultBaseURL).
	BaseURL string
	// APIKey is sent as x-goog-api-key (never in the URL). Empty sends no key.
	APIKey string
	// Model is used when a request names none.
	Model string
	// Client sends the requests (default: a new provider.NewHTTPClient(nil);
	// pass the process's shared client to pool connections).
	Client *http.Client
}

// Adapter speaks the Gemini API (generateContent and
// streamGenerateContent?alt=sse). It is safe for concurrent use; create it
// with New.
type Adapter struct {
	name, base, model string
	hdr               httpcall.Headers
	client            *http.Client
}

// New returns an Adapter for cfg (nil means all defaults).
func New(cfg *Config) *Adapter {
	c := defaults.Copy(cfg)
	c.Name = cmp.Or(c.Name, "gemini")
	c.BaseURL = cmp.Or(c.BaseURL, DefaultBaseURL)
	if c.Client == nil {
		c.Client = provider.NewHTTPClient(nil)
	}
	return &Adapter{name: c.Name, base: strings.TrimRight(c.BaseURL, "/"), model: c.Model,
		hdr: httpcall.NewHeaders("x-goog-api-key", c.APIKey), client: c.Client}
}

// Name implements provider.Adapter.
func (a *Adapter) Name() string { return a.name }

func (a *Adapter) send(ctx context.Context, req *provider.Request, stream bool) (*http.Response, httpcall.Call, error) {
	model := cmp.Or(req.Model, a.model)
	model = strings.TrimPrefix(model, "models/")
	call := httpcall.Call{Provider: a.name, Model: model}
	body, dropped, err := encode(req, model)
	if err != nil {
		return nil, call, call.Invalid(fmt.Errorf("encoding: %w", err))
	}
	call.Dropped = dropped
	u := a.base + "/v1beta/models/" + url.PathEscape(model)
	if stream {
		u += ":streamGenerateContent?alt=sse"
	} else {
		u += ":generateContent"
	}
	resp, err := call.Post(ctx, a.client, u, body, a.hdr)
	return resp, call, err
}

func requestID(h http.Header) string {
	return httpcall.FirstHeader(h, "X-Request-Id", "X-Goog-Request-Id")
}

// Chat implements provider.Adapter.
func (a *Adapter) Chat(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	resp, call, err := a.send(ctx, req, false)
	if err != nil {
		return nil, err
	}
	out, _, err := httpcall.Answer(ctx, call, resp, Decode, requestID(resp.Header))
	if err != nil {
		return nil, err
	}
	if out.Model == "" {
		out.Model = call.Model
	}
	return out, nil
}

// Stream implements provider.Adapter.
func (a *Adapter) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	resp, call, err := a.send(ctx, req, true)
	if err != nil {
		return nil, err
	}
	dec := &decoder{call: call, h: resp.Header}
	return call.OpenStream(ctx, resp, dec, requestID(resp.Header))
}

type wireResponse struct {
	Candidates     []wireCandidate `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *wireUsage      `json:"usageMetadata"`
	ModelVersion  string          `json:"modelVersion"`
	ResponseID    string          `json:"responseId"`
	Error         json.RawMessage `json:"error"`
}

type wireCandidate struct {
	Content      *wireContent `json:"content"`
	FinishReason string       `json:"finishReason"`
	Index        int          `json:"index"`
}

type wireUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
}

// canonical counts thinking tokens as output, as Google bills them.
func (u *wireUsage) canonical() provider.Usage {
	return provider.Usage{InputTokens: u.PromptTokenCount, OutputTokens: u.CandidatesTokenCount + u.ThoughtsTokenCount,
		CacheReadTokens: u.CachedContentTokenCount, ReasoningTokens: u.ThoughtsTokenCount}
}

var (
	errBlocked      = fmt.Errorf("prompt blocked")
	errNoCandidates = fmt.Errorf("response has no candidates")
)

// Decode parses a GenerateContentResponse into a canonical Response
// (Provider and RequestID are left for the caller). Function calls get ids
// "call_0", "call_1"... in order when Gemini sends none. A prompt block
// (promptFeedback.blockReason without candidates) or an error object is an
// error.
func Decode(body []byte) (*provider.Response, error) {
	var r wireResponse
	if err := httpcall.Unmarshal(body, &r, &r.Error); err != nil {
		return nil, err
	}
	if len(r.Candidates) == 0 {
		if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
			return nil, errBlocked
		}
		return nil, errNoCandidates
	}
	c := r.Candidates[0]
	out := &provider.Response{ID: r.ResponseID, Model: r.ModelVersion}
	if r.UsageMetadata != nil {
		out.Usage = r.UsageMetadata.canonical()
	}
	var text strings.Builder
	if c.Content != nil {
		for _, p := range c.Content.Parts {
			switch {
			case p.FunctionCall != nil:
				out.ToolCalls = append(out.ToolCalls, p.toolCall(len(out.ToolCalls)))
			case p.Text != "" && !p.Thought:
				text.WriteString(p.Text)
			}
		}
	}
	out.Text = text.String()
	out.FinishReason = finish(c.FinishReason, len(out.ToolCalls) > 0)
	return out, nil
}

// toolCall is the canonical call of a functionCall part; its thoughtSignature
// goes in Extra so it can be sent back.
func (p *wirePart) toolCall(i int) provider.ToolCall {
	f := p.FunctionCall
	id := f.ID
	if id == "" {
		id = "call_" + strconv.Itoa(i)
	}
	args := f.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	tc := provider.ToolCall{ID: id, Name: f.Name, Arguments: args}
	if p.ThoughtSignature != "" {
		sig, _ := json.Marshal(p.ThoughtSignature)
		tc.Extra = map[string]json.RawMessage{"thoughtSignature": sig}
	}
	return tc
}

// finish maps a Gemini finishReason to the canonical one: STOP with function
// calls is tool_calls; the safety family is content_filter; unknown reasons
// pass through lower-cased.
func finish(r string, calls bool) string {
	switch r {
	case "":
		return ""
	case "STOP":
		if calls {
			return provider.FinishToolCalls
		}
		return provider.FinishStop
	case "MAX_TOKENS":
		return provider.FinishLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE":
		return provider.FinishFiltered
	}
	return strings.ToLower(r)
}
