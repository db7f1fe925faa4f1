package batch

import (
	"crypto/rand"
	"errors"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// Codec reads and writes the bodies of the OpenAI and Anthropic APIs as
// the gateway does: pass gateway.Codec{} (the batch package stays below the
// edges, so it takes the gateway's codecs as a value). Implementations must
// be safe for concurrent use.
type Codec interface {
	// DecodeChat decodes a chat request body of dialect ("openai": chat
	// completions; "anthropic": messages): the request, its "model" and
	// its per-request fallbacks; the error is one line.
	DecodeChat(dialect string, body []byte) (req *provider.Request, model string, fallbacks []string, err error)
	// EncodeAnswer is a successful call's answer body in dialect.
	EncodeAnswer(dialect string, res *resilience.Result, created time.Time) []byte
	// EncodeError is a failed call's status and error body in dialect.
	EncodeError(dialect string, err error, now time.Time) (status int, body []byte)
}

// The dialects, as in provider.Request.Dialect.
const (
	dialectOpenAI    = "openai"
	dialectAnthropic = "anthropic"
)

// Status is how an item ended.
type Status string

// Item statuses, as written in every result line ("status", or
// "llmguard.status" in the OpenAI and Anthropic formats).
const (
	// StatusOK: answered. A later run skips it.
	StatusOK Status = "ok"
	// StatusFailed: the item's own fault (a malformed line, a request every
	// target rejects). A later run skips it unless told to retry failed ones.
	StatusFailed Status = "failed"
	// StatusCanceled: aborted in flight (a second Ctrl-C); not done. A later
	// run sends it again.
	StatusCanceled Status = "canceled"
)

// Record is one item's result, as written to the results file and passed
// to Config.OnEvent.
type Record struct {
	// ID is the item's id ("" for a line too malformed to have one) and
	// Line its line in the input, from 1.
	ID   string
	Line int
	// Status is how it ended.
	Status Status
	// Answer is the answer's text (StatusOK).
	Answer string
	// Error is the one-line verdict of a failure, and Class its class
	// ("malformed" for a malformed line, "canceled" when aborted).
	Error string
	Class string
	// Target is the "provider/model" that answered (or failed last).
	Target string
	// Attempts counts upstream attempts, Fallbacks moves to a next target.
	Attempts, Fallbacks int
	// InputTokens and OutputTokens are the answer's usage.
	InputTokens, OutputTokens int
	// CostUSD is the answer's cost (resilience.Result.Cost).
	CostUSD float64
	// Latency is the item's time from being sent to its result, over every
	// time it was sent.
	Latency time.Duration

	res *resilience.Result
	err error
}

// Class of a malformed line's record.
const classMalformed = "malformed"

// meta is a record's llmguard fields: the whole line in llmguard's format,
// the "llmguard" object beside the API's own fields in the others.
type meta struct {
	ID           string  `json:"id,omitempty"`
	Line         int     `json:"line"`
	Status       Status  `json:"status"`
	Answer       string  `json:"answer,omitempty"`
	Error        string  `json:"error,omitempty"`
	Class        string  `json:"class,omitempty"`
	Target       string  `json:"target,omitempty"`
	Attempts     int     `json:"attempts"`
	Fallbacks    int     `json:"fallbacks"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	LatencyMS    int64   `json:"latency_ms"`
}

func (rec *Record) meta(withText bool) meta {
	m := meta{Line: rec.Line, Status: rec.Status, Error: rec.Error, Class: rec.Class, Target: rec.Target,
		Attempts: rec.Attempts, Fallbacks: rec.Fallbacks, InputTokens: rec.InputTokens,
		OutputTokens: rec.OutputTokens, CostUSD: rec.CostUSD, LatencyMS: rec.Latency.Milliseconds()}
	if withText {
		m.ID, m.Answer = rec.ID, rec.Answer
	}
	return m
}

// ownResult is a line of llmguard's result format: the id always present.
type ownResult struct {
	ID string `json:"id"`
	meta
}

// openAIResult is a line of the OpenAI Batch API's output format.
type openAIResult struct {
	ID       string          `json:"id"`
	CustomID string          `json:"custom_id"`
	Response *openAIResponse `json:"response"`
	Error    *openAIError    `json:"error"`
	LLMGuard meta            `json:"llmguard"`
}

type openAIResponse struct {
	StatusCode int             `json:"status_code"`
	RequestID  string          `json:"request_id"`
	Body       json.RawMessage `json:"body"`
}

type openAIError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// anthropicResult is a line of the Anthropic Message Batches result format.
type anthropicResult struct {
	CustomID string `json:"custom_id"`
	Result   struct {
		Type    string          `json:"type"` // succeeded, errored, canceled
		Message json.RawMessage `json:"message,omitempty"`
		Error   json.RawMessage `json:"error,omitempty"`
	} `json:"result"`
	LLMGuard meta `json:"llmguard"`
}

// encode appends rec as one results line of format f, newline included.
func (rec *Record) encode(b []byte, f Format, c Codec, now time.Time) []byte {
	var v any
	switch f {
	case FormatOpenAI:
		v = rec.openAI(c, now)
	case FormatAnthropic:
		v = rec.anthropic(c, now)
	default:
		v = &ownResult{ID: rec.ID, meta: rec.meta(true)}
	}
	out, err := json.Append(b, v, json.SortMapKeys)
	if err != nil { // only raw bodies can fail, and they come from the gateway's encoder
		out, _ = json.Append(b, &ownResult{ID: rec.ID, meta: rec.meta(true)}, json.SortMapKeys)
	}
	return append(out, '\n')
}

func (rec *Record) openAI(c Codec, now time.Time) *openAIResult {
	v := &openAIResult{ID: "batch_req_" + rand.Text()[:24], CustomID: rec.ID, LLMGuard: rec.meta(false)}
	switch {
	case rec.res != nil:
		v.Response = &openAIResponse{StatusCode: 200, RequestID: rec.res.Response.RequestID,
			Body: c.EncodeAnswer(dialectOpenAI, rec.res, now)}
	case rec.err != nil:
		st, body := c.EncodeError(dialectOpenAI, rec.err, now)
		v.Response = &openAIResponse{StatusCode: st, RequestID: requestID(rec.err), Body: body}
	case rec.Status == StatusCanceled:
		v.Error = &openAIError{Code: "batch_cancelled", Message: rec.Error}
	default:
		v.Error = &openAIError{Code: "invalid_request", Message: rec.Error}
	}
	return v
}

func (rec *Record) anthropic(c Codec, now time.Time) *anthropicResult {
	v := &anthropicResult{CustomID: rec.ID, LLMGuard: rec.meta(false)}
	switch {
	case rec.res != nil:
		v.Result.Type = "succeeded"
		v.Result.Message = c.EncodeAnswer(dialectAnthropic, rec.res, now)
	case rec.Status == StatusCanceled:
		v.Result.Type = "canceled"
	case rec.err != nil:
		v.Result.Type = "errored"
		_, v.Result.Error = c.EncodeError(dialectAnthropic, rec.err, now)
	default:
		v.Result.Type = "errored"
		b, _ := json.Marshal(map[string]any{"type": "error",
			"error": map[string]string{"type": "invalid_request_error", "message": rec.Error}})
		v.Result.Error = b
	}
	return v
}

// requestID is the last provider request id of a failed call.
func requestID(err error) string {
	re, ok := errors.AsType[*resilience.RouteError](err)
	if !ok {
		return ""
	}
	if pe := re.Last(); pe != nil {
		return pe.Verdict.RequestID
	}
	return ""
}
