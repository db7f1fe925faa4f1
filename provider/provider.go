package provider

import (
	"context"
	"errors"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/classify"
)

// Roles of a Message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	// RoleTool carries tool results (OpenAI "tool" messages, Anthropic
	// tool_result blocks in a user turn, Gemini functionResponse parts).
	RoleTool = "tool"
	// RoleSystem is a system message among the turns (Anthropic's
	// {"role":"system"} messages, which Claude Code sends); its content is
	// text parts. An adapter whose API takes system messages in place
	// (OpenAI, Anthropic for a request in its own dialect) sends it there;
	// the others append its text, in order, to Request.System.
	RoleSystem = "system"
)

// Part types.
const (
	PartText       = "text"
	PartImage      = "image"
	PartToolCall   = "tool_call"
	PartToolResult = "tool_result"
	// PartThinking and PartRedactedThinking are Anthropic extended-thinking
	// blocks. The canonical form does not interpret them: such a Part keeps
	// the block's other fields (thinking and signature, or data) in Extra,
	// verbatim, and only an Anthropic target or client gets them back.
	PartThinking         = "thinking"
	PartRedactedThinking = "redacted_thinking"
)

// Part is one piece of a message's content.
type Part struct {
	Type string `json:"type"`
	// Text is set for PartText.
	Text string `json:"text,omitempty"`
	// Image is set for PartImage.
	Image *Image `json:"image,omitempty"`
	// ToolCall is set for PartToolCall (an assistant asking to call a tool).
	ToolCall *ToolCall `json:"tool_call,omitempty"`
	// ToolResult is set for PartToolResult.
	ToolResult *ToolResult `json:"tool_result,omitempty"`
	// Extra keeps dialect-specific fields of the part (e.g. Anthropic
	// cache_control) so a request that stays in its dialect loses nothing.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
	// Raw, when set, is the part's text undecoded: the JSON string, quotes
	// included, that the client sent for the Text of a PartText or the
	// ToolResult.Content of a PartToolResult, a slice of the client's body,
	// which then holds "" (see Request.Lean). Raw is valid UTF-8 and
	// escapes no UTF-16 surrogate (rawjson.Verbatim), so an encoder that
	// writes JSON strings may send it as it is in place of the text. Only
	// Lean gives parts with Raw; nil for most parts.
	Raw json.RawMessage `json:"-"`
}

// JoinText appends the non-empty text parts of parts to s, paragraphs apart
// (the system prompt of a dialect that takes one string).
func JoinText(s string, parts []Part) string {
	for _, p := range parts {
		if p.Type != PartText || p.Text == "" {
			continue
		}
		if s != "" {
			s += "\n\n"
		}
		s += p.Text
	}
	return s
}

// Image is an image input: either a URL or base64 data with a media type.
type Image struct {
	URL       string `json:"url,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"` // base64
}

// ToolCall is a model's request to call a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // a JSON object
	// Extra keeps provider fields that must go back with the call unchanged
	// when the conversation continues, e.g. Gemini's thoughtSignature. Only
	// the adapter of the dialect that set them sends them; nil for most calls.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
}

// ToolResult is the result of a tool call, sent back to the model.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name,omitempty"` // Gemini needs the function name
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Message is one conversation turn. Role is one of the Role constants or,
// for a request that stays in its dialect, whatever role the client sent
// (an adapter of another dialect leaves such a message out and names it in
// Dropped).
type Message struct {
	Role    string `json:"role"`
	Content []Part `json:"content"`
	// Extra keeps the message's fields the canonical form lacks (Anthropic
	// clear_at, OpenAI name), sent on only by an adapter of the request's
	// dialect; nil for most messages.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
}

// Tool declares a function the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"` // JSON Schema object
}

// ResponseFormat is a request for JSON output.
type ResponseFormat struct {
	// Type is "json_object" (any JSON object) or "json_schema".
	Type string `json:"type"`
	// Name, Description and Strict are OpenAI's json_schema fields.
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Strict      *bool  `json:"strict,omitempty"`
	// Schema is the JSON Schema the output must match (json_schema).
	Schema json.RawMessage `json:"schema,omitempty"`
}

// ToolChoice says whether and which tool the model must call.
type ToolChoice struct {
	// Mode is "auto", "none", "required" (any tool) or "tool" (the named one).
	Mode string `json:"mode"`
	Name string `json:"name,omitempty"`
}

// Request is the canonical chat request. The zero value of every optional
// field means "provider default".
type Request struct {
	// Model is the provider's model id (without the "provider/" prefix).
	Model       string            `json:"model"`
	System      string            `json:"system,omitempty"`
	Messages    []Message         `json:"messages"`
	MaxTokens   int               `json:"max_tokens,omitempty"`
	Temperature *float64          `json:"temperature,omitempty"`
	TopP        *float64          `json:"top_p,omitempty"`
	Stop        []string          `json:"stop,omitempty"`
	Stream      bool              `json:"stream,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	Tools       []Tool            `json:"tools,omitempty"`
	ToolChoice  *ToolChoice       `json:"tool_choice,omitempty"`
	// ParallelToolCalls, when set, says whether the model may call several
	// tools in one turn (OpenAI parallel_tool_calls, Anthropic
	// tool_choice.disable_parallel_tool_use negated).
	ParallelToolCalls *bool `json:"parallel_tool_calls,omitempty"`
	// Assemble says the caller reads the stream into one answer (a plain
	// call made as a stream): an adapter relaying the request then rebuilds
	// the provider's own answer for RawAnswer. A stream relayed to its
	// client event for event needs none, and spends nothing on it.
	Assemble bool `json:"-"`
	// ResponseFormat asks for JSON output (OpenAI response_format,
	// Anthropic output_config.format, Gemini responseMimeType and
	// responseJsonSchema); nil for text.
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
	// Seed asks for reproducible sampling (OpenAI seed, Gemini seed).
	Seed *int `json:"seed,omitempty"`
	// TopK limits sampling to the K likeliest tokens (Anthropic top_k,
	// Gemini topK).
	TopK *int `json:"top_k,omitempty"`
	// User identifies the end user to the provider (OpenAI user,
	// Anthropic metadata.user_id when Metadata lacks it).
	User string `json:"user,omitempty"`

	// Dialect names the wire dialect the request arrived in ("openai",
	// "anthropic", "gemini"), or "" when built in code.
	Dialect string `json:"dialect,omitempty"`
	// Extra holds the top-level fields of the original body that the
	// canonical form lacks (thinking, response_format, unknown fields...).
	// An adapter whose dialect equals Dialect sends them on unchanged.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
	// Headers are request headers of the original call that only a target
	// of the same dialect understands, keyed in lower case (the gateway sets
	// "anthropic-beta" for Anthropic clients such as Claude Code). An
	// adapter whose dialect equals Dialect sends them on; nil for most requests.
	Headers map[string]string `json:"headers,omitempty"`
	// Lossy names what the canonical fields could not take from fields
	// they do decode ("system[].cache_control", "tools[type=bash_20250124]");
	// the field's whole value is then in Extra for a target of Dialect. An
	// adapter of another dialect names these, and the other Extra keys, in
	// Response.Dropped.
	Lossy []string `json:"lossy,omitempty"`
	// Passthrough is the client's original body in a dialect some adapter
	// speaks natively (see Passthrough); nil for most requests.
	Passthrough *Passthrough `json:"passthrough,omitempty"`
	// Deferred, when set, decodes the fields the request was made without
	// (see Full): the gateway relays a request in its own dialect reading
	// only what routing needs (model, stream, max tokens, metadata) and
	// leaves its conversation in Passthrough.Body. Code that reads the
	// conversation (Messages, System, Tools...) reads it from Full. Nil
	// for most requests.
	Deferred *Deferred `json:"-"`
}

// Usage counts tokens.
type Usage struct {
	// InputTokens counts every prompt token, cache reads and writes
	// included (as OpenAI's prompt_tokens does; Anthropic's input_tokens
	// is InputTokens - CacheReadTokens - CacheWriteTokens).
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// CacheReadTokens are the prompt tokens served from the provider's
	// prompt cache (Anthropic cache_read_input_tokens, OpenAI
	// prompt_tokens_details.cached_tokens, Gemini cachedContentTokenCount).
	CacheReadTokens int `json:"cache_read_tokens,omitempty"`
	// CacheWriteTokens are the prompt tokens written to the cache
	// (Anthropic cache_creation_input_tokens; other providers don't say).
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// ReasoningTokens are the output tokens spent thinking (OpenAI
	// completion_tokens_details.reasoning_tokens, Gemini
	// thoughtsTokenCount), included in OutputTokens.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// ServiceTier is the tier that served the request, in the provider's
	// words ("standard", "priority", "default", "flex"); "" when unsaid.
	ServiceTier string `json:"service_tier,omitempty"`
}

// Prompt is the prompt side of u (input and cache tokens, the tier): what
// a stream reports at its start, before any output.
func (u Usage) Prompt() Usage {
	return Usage{InputTokens: u.InputTokens, CacheReadTokens: u.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens, ServiceTier: u.ServiceTier}
}

// Merge sets each field of u that is not zero in v: a stream reports usage
// piecemeal (Anthropic: input at the start, output at the end).
func (u *Usage) Merge(v Usage) {
	set := func(p *int, n int) {
		if n != 0 {
			*p = n
		}
	}
	set(&u.InputTokens, v.InputTokens)
	set(&u.OutputTokens, v.OutputTokens)
	set(&u.CacheReadTokens, v.CacheReadTokens)
	set(&u.CacheWriteTokens, v.CacheWriteTokens)
	set(&u.ReasoningTokens, v.ReasoningTokens)
	if v.ServiceTier != "" {
		u.ServiceTier = v.ServiceTier
	}
}

// Finish reasons (canonical).
const (
	FinishStop      = "stop"
	FinishLength    = "length"
	FinishToolCalls = "tool_calls"
	FinishFiltered  = "content_filter"
)

// Response is the canonical non-streaming answer.
type Response struct {
	ID           string     `json:"id,omitempty"`
	Provider     string     `json:"provider"`
	Model        string     `json:"model"` // the model that actually answered
	Text         string     `json:"text"`
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
	FinishReason string     `json:"finish_reason"`
	// StopSequence is the stop sequence that ended the answer, when the
	// provider says (Anthropic stop_sequence).
	StopSequence string `json:"stop_sequence,omitempty"`
	Usage        Usage  `json:"usage"`
	RequestID    string `json:"request_id,omitempty"` // the provider's request id
	// Thinking holds the model's thinking blocks in the order they came,
	// all before the text and tool calls: Parts of type PartThinking or
	// PartRedactedThinking whose Extra holds the block's fields verbatim
	// ("thinking" and "signature", or "data"), the form in which a client
	// sends them back in its next assistant turn. A client of another
	// dialect never sees them; nil for most responses.
	Thinking []Part `json:"thinking,omitempty"`
	// Dropped names the request fields the adapter could not send to its
	// provider (a request from another dialect: "seed",
	// "messages[].content[type=document]"), each once; the gateway reports
	// them in the x-llmguard-dropped header. Nil when nothing was lost.
	Dropped []string `json:"dropped,omitempty"`
	// Raw is the upstream's body verbatim when the adapter relayed the
	// request's Passthrough body; the fields above say the same in
	// canonical form. nil for most responses.
	Raw json.RawMessage `json:"raw,omitempty"`
	// RateLimit is what the response headers announced of the caller's
	// rate limits (nil: nothing). It describes the moment of the answer,
	// so it is not kept with a stored answer.
	RateLimit *RateLimit `json:"-"`
}

// ToolCallDelta is a streamed fragment of a tool call. Index identifies the
// call within the response; ID and Name come with the first fragment.
type ToolCallDelta struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"` // a fragment of JSON text
	// Extra is ToolCall.Extra, sent with the first fragment (Gemini's
	// thoughtSignature); nil for most deltas.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
}

// ThinkingDelta is a streamed fragment of a thinking block (see
// Response.Thinking). Index numbers the thinking blocks of a response from 0;
// the first fragment of a block carries its Type.
type ThinkingDelta struct {
	Index int `json:"index"`
	// Type is PartThinking or PartRedactedThinking, set on the first fragment.
	Type string `json:"type,omitempty"`
	// Thinking is a fragment of the thinking text.
	Thinking string `json:"thinking,omitempty"`
	// Signature is a fragment of the block's signature (Anthropic sends it
	// whole, after the text); the next turn fails without it.
	Signature string `json:"signature,omitempty"`
	// Data is a redacted_thinking block's encrypted content, sent whole
	// with the first fragment.
	Data string `json:"data,omitempty"`
}

// Chunk is one streaming delta. Fields are set only when the chunk carries them.
type Chunk struct {
	Text     string         `json:"text,omitempty"`
	ToolCall *ToolCallDelta `json:"tool_call,omitempty"`
	// Thinking is a fragment of a thinking block; nil for most chunks.
	Thinking     *ThinkingDelta `json:"thinking,omitempty"`
	FinishReason string         `json:"finish_reason,omitempty"`
	// StopSequence is Response.StopSequence, with the finish reason.
	StopSequence string `json:"stop_sequence,omitempty"`
	Usage        *Usage `json:"usage,omitempty"`
	// Model and ID are set on the first chunk when the provider says them.
	Model string `json:"model,omitempty"`
	ID    string `json:"id,omitempty"`
	// Dropped is Response.Dropped, on the first chunk of a stream.
	Dropped []string `json:"dropped,omitempty"`
	// Raw is the upstream event verbatim when the adapter relays the
	// request's Passthrough body; the fields above carry what it means in
	// canonical form (none for an event that only the dialect has). nil for
	// most chunks.
	Raw *RawEvent `json:"raw,omitempty"`
}

// Stream is an open streaming response. Recv returns io.EOF after the last
// chunk of a stream that ended properly; any other error is a *Error (a
// provider error event, a broken or truncated stream). Close releases the
// connection and may be called at any time, more than once, also from
// another goroutine while Recv runs (which it aborts); otherwise a Stream is
// not safe for concurrent use.
type Stream interface {
	Recv() (Chunk, error)
	Close() error
	// RequestID is the provider's request id from the response headers.
	RequestID() string
}

// BufferReporter is implemented by a Stream that can tell whether its next
// Recv returns a chunk already received, without waiting for the network:
// a relay flushes what it wrote to its client only before a Recv that
// would wait, so that a burst of events costs one flush. Buffered may
// decode events already received (never reading the network); like Recv
// it is not safe for concurrent use.
type BufferReporter interface {
	Buffered() bool
}

// Buffered reports whether s's next Recv returns a chunk without waiting
// for the network: false when s does not say (see BufferReporter).
func Buffered(s Stream) bool {
	b, ok := s.(BufferReporter)
	return ok && b.Buffered()
}

// Adapter speaks one provider's API over net/http. Every non-success is
// returned as a *Error carrying the classifier's verdict. Adapters never
// retry. They are safe for concurrent use.
type Adapter interface {
	// Name is the provider name ("anthropic", "openai", "groq", ...).
	Name() string
	// Chat sends a non-streaming request.
	Chat(ctx context.Context, req *Request) (*Response, error)
	// Stream sends a streaming request and returns once the response
	// headers arrived (and a 2xx status was seen).
	Stream(ctx context.Context, req *Request) (Stream, error)
}

// Error is a failed provider call. Its Error() is exactly the verdict's one
// redacted line. Use errors.As to get it from wrapped errors.
type Error struct {
	Provider string
	Model    string
	Verdict  classify.Verdict
	// AfterFirstToken reports that a stream failed after it had delivered
	// content, so a retry is no longer invisible to the client.
	AfterFirstToken bool
	// Err is the underlying transport error, if any.
	Err error
	// RateLimit is what the failed response's headers announced of the
	// caller's rate limits (nil: nothing, or no response).
	RateLimit *RateLimit
}

// Error returns the verdict's one redacted line.
func (e *Error) Error() string { return e.Verdict.Message }

// Unwrap returns the transport error, if any.
func (e *Error) Unwrap() error { return e.Err }

// AsError returns the *Error in err's chain, or nil.
func AsError(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}
