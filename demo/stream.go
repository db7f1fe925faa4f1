package demo

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/telemetry"
)

// StreamEvery makes every StreamEvery-th request of the night a stream,
// for every client alike: the night has streams too (a first token to
// wait for, a stream broken half way).
const StreamEvery = 4

// streamed reports whether request i is a stream.
func streamed(i int) bool { return i%StreamEvery == StreamEvery-1 }

// streamRead is what reading a stream to its end gave.
type streamRead struct {
	first  time.Duration // from the request to the first text
	chunks int           // chunks with text
	usage  provider.Usage
	model  string
	err    error // nil: it ended properly (io.EOF)
}

// read reads s to its end; began is when the request was sent.
func read(s provider.Stream, began time.Time) streamRead {
	var r streamRead
	for {
		c, err := s.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.err = err
			}
			return r
		}
		if c.Text != "" {
			if r.chunks == 0 {
				r.first = time.Since(began)
			}
			r.chunks++
		}
		if c.Usage != nil {
			r.usage = *c.Usage
		}
		if c.Model != "" {
			r.model = c.Model
		}
	}
}

// streamChat sends request i through eng as a stream and reads it to its
// end (a break after the first token continues on the next target, inside
// the engine), counting it in m.
func streamChat(ctx context.Context, eng *resilience.Engine, i int, m *Metrics) (target string, wasted float64, err error) {
	began := time.Now()
	sr, err := eng.Stream(ctx, &resilience.Call{Route: "default", Request: prompt(i)})
	if err != nil {
		m.request(ctx, began, nil, err)
		if re, ok := errors.AsType[*resilience.RouteError](err); ok {
			wasted = re.Wasted
		}
		return "", wasted, err
	}
	r := read(sr.Stream, began)
	sr.Stream.Close()
	if m != nil {
		rec := &telemetry.Request{Dialect: "demo", Route: "default", Target: sr.Target, Outcome: telemetry.OutcomeSuccess,
			Duration: time.Since(began), FirstChunk: r.first, Chunks: r.chunks, Usage: r.usage, Model: r.model,
			Broken: r.err != nil, WastedUSD: sr.Wasted}
		if r.err != nil {
			rec.Outcome = telemetry.OutcomeError
		}
		m.m.Request(rec)
	}
	return sr.Target, sr.Wasted, r.err
}

// stream sends req as a stream on the baseline's adapter and reads it to
// its end.
func (b *baseline) stream(ctx context.Context, req *provider.Request) error {
	cp := *req
	cp.Stream = true
	s, err := b.a.Stream(ctx, &cp)
	if err != nil {
		return err
	}
	defer s.Close()
	return read(s, time.Now()).err
}
