package gateway

import (
	"strings"
	"time"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// Codec is the gateway's dialect codecs as a value, for callers that hold
// request bodies outside HTTP: llmguard batch (batch.Config.Codec) reads
// OpenAI Batch API and Anthropic Message Batches files, whose lines carry
// the very bodies these endpoints take, and writes the answers these
// endpoints give. One decoder and one encoder per dialect, here and for the
// endpoints alike. The zero value is ready; it is safe for concurrent use.
type Codec struct{}

// DecodeChat decodes a chat request body of dialect (DialectOpenAI: a chat
// completions body; DialectAnthropic: a messages body) as the gateway's
// endpoints do. model is the body's "model" (a route, provider/model or a
// bare model id); fallbacks its per-request fallbacks ("fallbacks", or
// OpenRouter's "models"). A malformed body's error is one line naming the
// field.
func (Codec) DecodeChat(dialect string, body []byte) (req *provider.Request, model string, fallbacks []string, err error) {
	var in *inbound
	if dialect == DialectAnthropic {
		in, err = decodeAnthropic(body)
	} else {
		in, err = decodeOpenAI(body)
	}
	if err != nil {
		return nil, "", nil, err
	}
	if aerr := checkNames(in); aerr != nil {
		return nil, "", nil, aerr
	}
	return in.req, in.model, in.fallbacks, nil
}

// EncodeAnswer is the body the gateway answers for a successful call in
// dialect: the provider's own answer when the adapter relayed the request
// in its dialect, else an OpenAI chat.completion or an Anthropic message
// (created is its timestamp).
func (Codec) EncodeAnswer(dialect string, res *resilience.Result, created time.Time) []byte {
	resp := res.Response
	if resp.Raw != nil {
		return resp.Raw // relayed: the provider's own answer, in the request's dialect
	}
	if resp.Model == "" {
		r := *resp // a cached response is shared: a copy
		_, r.Model, _ = strings.Cut(res.Target, "/")
		resp = &r
	}
	if dialect == DialectAnthropic {
		return appendAnthropicResponse(nil, resp, responseID(dialect, resp.ID))
	}
	return appendOpenAIResponse(nil, resp, responseID(dialect, resp.ID), created.Unix())
}

// EncodeError is the status and error body the gateway answers in dialect
// for a failed engine call (see fromEngine): the provider's own status and
// type for a failure no retry clears, 429 when every target was rate
// limited, 504 at the deadline, else 503; the message is one line.
func (Codec) EncodeError(dialect string, err error, now time.Time) (status int, body []byte) {
	e := fromEngine(err, now)
	if dialect == DialectAnthropic {
		return e.status, appendAnthropicError(nil, e)
	}
	return e.status, appendOpenAIError(nil, e)
}
