package httpcall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/sse"
	"github.com/llmguard/llmguard/provider"
)

// Decoder turns one SSE event of a dialect into canonical chunks. It
// returns done when the event is the stream's terminator. An error event
// is returned as a non-nil error (usually from Call.StreamEvent).
type Decoder interface {
	Decode(ev sse.Event) (chunks []provider.Chunk, done bool, err error)
}

// Borrower is a Decoder that may keep nothing of an event past Decode
// (what it returns holds copies): when BorrowsEvents says so, its stream
// reads each event's data in place, not a copy of it (sse.Reader.Borrow).
type Borrower interface {
	BorrowsEvents() bool
}

// ErrTruncated is wrapped by the error of a stream that ended before its
// terminator and before a finish reason with usage.
var ErrTruncated = errors.New("stream ended before its terminator")

// Stream is a provider.Stream over an SSE response body.
//
// The end rule: Recv returns io.EOF after the dialect's terminator
// (Anthropic message_stop, OpenAI data: [DONE]); a stream that ends without
// one still ends cleanly when it delivered a finish reason and usage (the
// only terminator Gemini has). Anything else is truncation, a classified
// *provider.Error wrapping ErrTruncated. AfterFirstToken is set on every
// error once text or a tool-call delta was returned by Recv.
type Stream struct {
	ctx   context.Context
	call  Call
	resp  *http.Response
	rd    *sse.Reader
	dec   Decoder
	reqID string
	rl    *provider.RateLimit

	pending   []provider.Chunk // the decoder's: valid until it decodes again
	good      int              // events decoded
	malformed int              // events skipped: they could not be decoded (see next)
	err       error
	delivered bool
	finish    bool
	usage     bool

	closeOnce sync.Once
	closeErr  error
	byCaller  atomic.Bool // Close was called
}

// NewStream returns a Stream reading resp's body with dec.
func (c Call) NewStream(ctx context.Context, resp *http.Response, dec Decoder, requestID string) *Stream {
	rd := sse.NewReader(resp.Body)
	if b, ok := dec.(Borrower); ok && b.BorrowsEvents() {
		rd.Borrow()
	}
	return &Stream{ctx: ctx, call: c, resp: resp, rd: rd, dec: dec, reqID: requestID,
		rl: provider.ParseRateLimit(resp.Header, time.Now())}
}

// Raws puts the upstream's events on the chunks decoded from them, for a
// relayed request's stream to go back to its client event for event
// (Chunk.Raw). Its zero value is ready to use; it is not safe for
// concurrent use.
type Raws struct {
	block []provider.RawEvent // where the next events are kept: one allocation for many
	own   [1]provider.Chunk   // the chunk of an event that decoded to none
}

// On puts the event name/data on each of chunks, or on a chunk of its own
// when the event decoded to none (valid until the next call). The chunks
// of one event share it. data is kept, not copied: it must be the event's
// own (sse.Event.Data is).
func (r *Raws) On(chunks []provider.Chunk, name string, data []byte) []provider.Chunk {
	if len(r.block) == 0 {
		r.block = make([]provider.RawEvent, 64)
	}
	raw := &r.block[0]
	r.block = r.block[1:]
	*raw = provider.RawEvent{Name: name, Data: data}
	if len(chunks) == 0 {
		r.own[0] = provider.Chunk{Raw: raw}
		return r.own[:]
	}
	for i := range chunks {
		chunks[i].Raw = raw
	}
	return chunks
}

// RelayWhole is a WholeDecoder's DecodeWhole for a dialect's decode: with
// relay (the request was its client's own body) the answer keeps body as
// its Raw, to go back as it came.
func RelayWhole(decode func([]byte) (*provider.Response, error), body []byte, relay bool) (*provider.Response, error) {
	r, err := decode(body)
	if err == nil && relay {
		r.Raw = body
	}
	return r, err
}

// WholeDecoder is a Decoder that also reads the dialect's non-streaming
// answer, for an upstream that answers a streaming request with a whole
// JSON body (a server that does not stream).
type WholeDecoder interface {
	DecodeWhole(body []byte) (*provider.Response, error)
}

// OpenStream is NewStream for a 2xx response to a streaming request, except
// for a JSON body: a whole answer (from an upstream that does not stream;
// dec must be a WholeDecoder, and the body at most MaxBody) is returned as
// a stream of its chunks, and anything else (a proxy or an API answering an
// error) as a classified error instead of a stream that would end truncated.
func (c Call) OpenStream(ctx context.Context, resp *http.Response, dec Decoder, requestID string) (provider.Stream, error) {
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		wd, whole := dec.(WholeDecoder)
		limit := int64(MaxErrorBody)
		if whole {
			limit = MaxBody
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
		resp.Body.Close()
		if err != nil {
			return nil, c.Transport(ctx, resp.Header, fmt.Errorf("reading response body: %w", err))
		}
		if whole {
			if r, err := wd.DecodeWhole(body); err == nil {
				r.Dropped = c.Dropped
				return &wholeStream{ChunkStream: provider.ChunkStream{Chunks: r.Chunks(), ID: requestID}, raw: r.Raw,
					rl: provider.ParseRateLimit(resp.Header, time.Now())}, nil
			}
		}
		return nil, c.BadBody(resp, body[:min(len(body), MaxErrorBody)], errNotStream)
	}
	return c.NewStream(ctx, resp, dec, requestID), nil
}

// wholeStream streams the chunks of a whole answer; raw is the body when
// the adapter relays it (see provider.RawAnswerer).
type wholeStream struct {
	provider.ChunkStream
	raw json.RawMessage
	rl  *provider.RateLimit
}

func (s *wholeStream) RawAnswer() json.RawMessage { return s.raw }

// RateLimit implements provider.RateLimitReporter.
func (s *wholeStream) RateLimit() *provider.RateLimit { return s.rl }

var errNotStream = errors.New("a JSON body where an event stream was expected")

// RequestID implements provider.Stream.
func (s *Stream) RequestID() string { return s.reqID }

// RateLimit implements provider.RateLimitReporter: what the response
// headers announced (nil: nothing).
func (s *Stream) RateLimit() *provider.RateLimit { return s.rl }

// RawAnswer implements provider.RawAnswerer for a decoder that rebuilds the
// answer of a relayed request (nil for the others).
func (s *Stream) RawAnswer() json.RawMessage {
	if r, ok := s.dec.(provider.RawAnswerer); ok {
		return r.RawAnswer()
	}
	return nil
}

// Recv implements provider.Stream.
func (s *Stream) Recv() (provider.Chunk, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return provider.Chunk{}, s.err
		}
		s.next()
	}
	ch := s.pending[0]
	s.pending = s.pending[1:]
	if d := s.call.Dropped; d != nil {
		ch.Dropped, s.call.Dropped = d, nil
	}
	if ch.Text != "" || ch.ToolCall != nil || ch.Thinking != nil {
		s.delivered = true
	}
	if ch.FinishReason != "" {
		s.finish = true
	}
	if ch.Usage != nil {
		s.usage = true
	}
	return ch, nil
}

// Buffered implements provider.BufferReporter: the next Recv returns a
// chunk decoded already or from events the reader holds. It decodes the
// events held until one gives a chunk, so that an event that gives none
// (a ping, the end of a block) does not hide a wait.
func (s *Stream) Buffered() bool {
	for len(s.pending) == 0 && s.err == nil && s.rd.Buffered() {
		s.next()
	}
	return len(s.pending) > 0
}

func (s *Stream) next() {
	ev, err := s.rd.Next()
	if err != nil && s.byCaller.Load() {
		err = fmt.Errorf("%w: %w", errStreamClosed, err)
	}
	if err != nil {
		if err == io.EOF {
			if s.finish && s.usage {
				s.end(io.EOF)
				return
			}
			err = ErrTruncated
		} else if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: %w", ErrTruncated, err)
		}
		s.end(s.call.Transport(s.ctx, s.resp.Header, err))
		return
	}
	// What Decode returns is valid until its next call, which comes once
	// pending is drained: no copy.
	chunks, done, err := s.dec.Decode(ev)
	s.pending = chunks
	// Count what the decoder produced toward the end rule even before the
	// caller reads it, so a terminator in the same event still counts.
	for _, ch := range chunks {
		s.finish = s.finish || ch.FinishReason != ""
		s.usage = s.usage || ch.Usage != nil
	}
	var pe *provider.Error // asked only of an error: asking escapes it to the heap
	if err != nil {
		pe = provider.AsError(err)
	}
	switch {
	case err != nil && pe == nil:
		// An event that does not decode (invalid JSON in one data line) is
		// skipped and counted, unless the stream is mostly such events:
		// garbage, not a stream of this dialect.
		s.malformed++
		if s.malformed >= maxMalformed && s.malformed > s.good {
			s.end(s.call.Transport(s.ctx, s.resp.Header, fmt.Errorf("%d of %d events malformed, the last: %w",
				s.malformed, s.malformed+s.good, err)))
		}
	case err != nil:
		s.end(pe)
	case done:
		s.end(io.EOF)
	default:
		s.good++
	}
}

// maxMalformed is the count of malformed events from which a stream fails
// when they outnumber the events that decoded.
const maxMalformed = 3

// MalformedEvents implements provider.MalformedReporter.
func (s *Stream) MalformedEvents() int { return s.malformed }

// end records the final error and releases the connection. Chunks still
// pending are delivered first.
func (s *Stream) end(err error) {
	if pe, ok := err.(*provider.Error); ok {
		// Content already pending counts as delivered by the time the
		// caller sees this error.
		after := s.delivered
		for _, ch := range s.pending {
			after = after || ch.Text != "" || ch.ToolCall != nil || ch.Thinking != nil
		}
		pe.AfterFirstToken = after
	}
	s.err = err
	if err == io.EOF {
		// Drain a little so the connection can be reused.
		_, _ = io.CopyN(io.Discard, s.resp.Body, 4<<10)
	}
	s.closeBody()
	// Read no more (s.err is set), on the reading goroutine: its buffer
	// can serve another stream. What the stream returned holds copies.
	s.rd.Release()
}

// Close implements provider.Stream: it releases the connection, which
// aborts a Recv in progress. It may be called more than once, and from
// another goroutine while Recv runs; a later Recv returns a *provider.Error
// wrapping "stream closed by the caller".
func (s *Stream) Close() error {
	s.byCaller.Store(true)
	return s.closeBody()
}

func (s *Stream) closeBody() error {
	s.closeOnce.Do(func() { s.closeErr = s.resp.Body.Close() })
	return s.closeErr
}

var errStreamClosed = errors.New("stream closed by the caller")

// StreamEvent classifies an error event that arrived inside a 2xx stream
// with the classifier's stream helper. When the helper does not recognise
// the event as an error, the event is re-framed as SSE ("event: NAME\ndata:
// ...\n\n") and classified as a 200 event-stream body, so the classifier
// sees exactly what the provider sent.
func (c Call) StreamEvent(h http.Header, name string, data []byte) *provider.Error {
	if v, ok := classify.ClassifyStreamError(c.Provider, data, h); ok {
		return &provider.Error{Provider: c.Provider, Model: c.Model, Verdict: v}
	}
	var b []byte
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "text/event-stream")
	return c.Classify(classify.Input{Status: http.StatusOK, Header: h, Body: b}, nil)
}
