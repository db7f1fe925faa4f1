package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/sse"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// streamEncoder writes canonical chunks in a client dialect.
type streamEncoder interface {
	// start writes the stream's head; id is the upstream's message id
	// ("" when unknown), kept when it has the dialect's prefix.
	start(model, id string, u *provider.Usage) error
	chunk(c *provider.Chunk) error
	finish(reason string, u provider.Usage) error
	fail(e *apiError) error
}

// flushBound is the longest a stream's events wait unflushed while the
// upstream's keep coming (see sse.Writer.Coalesce): the pump flushes when
// the upstream has nothing more buffered, so a burst of events costs one
// flush and a lone event, the first token included, goes out at once.
const flushBound = 5 * time.Millisecond

// pump copies one logical stream to the client; the engine continues it on
// another target when it breaks after tokens went out, and says so with an
// EventContinue (next).
type pump struct {
	s       *Server
	in      *inbound
	call    *resilience.Call
	enc     streamEncoder
	sw      *sse.Writer
	target  string
	acc     *access // the request's access-log record
	started bool
	finish  string // the finish reason, once seen
	usage   provider.Usage
	// usageFinal: usage arrived with or after the finish reason, so the
	// answer is complete even if the terminator never comes.
	usageFinal bool
	next       string         // the target the stream continued on, until the pump says so
	c          provider.Chunk // the chunk being written (here, not on the heap per chunk)
	// held: c is the stream's first chunk (or firstErr its error), read
	// before the headers went out and not written yet.
	held     bool
	firstErr error
	// drained: the answer is complete and its stream read on in the
	// background (drain); the access line counted its malformed events.
	drained bool
}

// onEvent notes the engine's continuation of the stream, and the events it
// skipped as malformed (for the access line). The engine emits a
// continuation from within Recv, on the pump's goroutine.
func (p *pump) onEvent(ev resilience.Event) {
	switch ev.Kind {
	case resilience.EventContinue:
		p.next = ev.Target
	case resilience.EventMalformed:
		if p.acc != nil && !p.drained {
			p.acc.malformed.Add(int64(ev.Malformed))
		}
	}
}

func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, in *inbound, call *resilience.Call) {
	ctx := r.Context()
	g := newGuard(ctx, s.opts.StreamIdleTimeout)
	p := &pump{s: s, in: in, call: call, acc: accessOf(w)}
	call.OnEvent = chainEvents(call.OnEvent, p.onEvent)
	sr, err := s.eng.Stream(g.ctx, call)
	if err != nil {
		g.stop()
		s.fail(w, r, in.dialect, call.Route, err)
		return
	}
	h := w.Header()
	setResultHeaders(h, in.dialect, sr.Target, sr.Attempts, sr.Fallbacks, sr.Stream.RequestID())
	setCostHeaders(h, -1, sr.Wasted)
	// The first chunk is read before the headers go out, for its Dropped
	// (the engine returns a stream once its first token arrived, so that
	// Recv does not wait); the pump writes it first.
	p.c, p.firstErr = sr.Stream.Recv()
	p.held = true
	setDropped(h, rsStreamDropped(in, &p.c))
	if sr.Cached {
		h.Set("X-Llmguard-Cached", "true")
		h.Set("Idempotent-Replayed", "true")
	}
	if sr.Static {
		h.Set("X-Llmguard-Static", "true")
	}
	h.Set("X-Accel-Buffering", "no")
	bp, held := s.bufs.Get().(*[]byte), s.bufs.Get().(*[]byte)
	defer s.putBuf(bp)
	bw := &coalescer{ResponseWriter: w, buf: *held}
	defer func() {
		bw.end() // what is left (the handler's return flushes it)
		*held = bw.buf
		s.putBuf(held) // as it grew
	}()
	sw := sse.NewWriter(bw)
	sw.Coalesce(flushBound)
	w.WriteHeader(http.StatusOK)
	p.sw, p.target = sw, sr.Target
	_, model, _ := strings.Cut(sr.Target, "/")
	switch in.dialect {
	case DialectAnthropic:
		p.enc = &anStream{w: sw, buf: *bp, id: "msg_" + randText(), model: model}
	case DialectResponses:
		p.enc = newRsStream(sw, *bp, in, s.now().Unix(), s.keeper(r, in))
	default:
		p.enc = &oaStream{w: sw, buf: *bp, id: "chatcmpl-" + randText(),
			created: s.now().Unix(), includeUsage: in.includeUsage}
	}
	p.run(ctx, sr.Stream, g)
}

func (p *pump) run(ctx context.Context, st provider.Stream, g *guard) {
	more := false // the stream holds the next chunk: Recv does not wait
	for {
		var err error
		if p.held {
			p.held, err = false, p.firstErr
		} else {
			p.c, err = st.Recv()
		}
		if p.next != "" {
			p.continued()
		}
		if err == nil {
			if !more {
				// The stream moved (a chunk it held came with the one
				// before, which noted the time).
				g.kick()
			}
			// Asked before the chunk is written, so that the writer need not
			// time the events the pump flushes at once (FlushNext); and
			// before a complete stream closes too: reading a terminator the
			// upstream sent already lets its connection be reused.
			more = provider.Buffered(st)
			if !more {
				p.sw.FlushNext()
			}
			if werr := p.write(&p.c); werr != nil {
				st.Close()
				g.stop()
				return // the client went away
			}
			if p.finish != "" && p.usageFinal {
				// Complete: don't wait for a terminator that may never come.
				// (The handler's return flushes what is written.)
				p.end()
				if n := provider.Malformed(st); n > 0 && p.acc != nil {
					p.acc.malformed.Add(int64(n))
				}
				p.drained = true
				drain(st, g)
				return
			}
			if !more {
				p.sw.Flush() // before Recv waits
			}
			continue
		}
		st.Close()
		stalled := errors.Is(context.Cause(g.ctx), errStalled)
		g.stop()
		if errors.Is(err, io.EOF) || p.finish != "" {
			p.end()
			return
		}
		if ctx.Err() != nil {
			return // the client went away
		}
		if stalled {
			err = &provider.Error{Err: errStalled, AfterFirstToken: true, Verdict: classify.Verdict{
				Class: classify.Timeout, Scope: classify.ScopeModel, Retryable: true, Fallback: true,
				Message: "upstream stream stalled (no data for " + p.s.opts.StreamIdleTimeout.String() + ")"}}
		}
		p.s.log.Warn("gateway: stream broke after first token", "target", p.target, "err", err.Error())
		if !p.started {
			_ = p.startNow()
		}
		e := fromStream(err)
		p.acc.noteStreamError(e.status)
		_ = p.enc.fail(e)
		return
	}
}

// continued relays the engine's continuation of the stream on p.next.
func (p *pump) continued() {
	p.s.log.Info("gateway: stream continued", "from", p.target, "to", p.next)
	// Headers went out long ago: say it in an SSE comment, which clients
	// ignore and people debugging read.
	_ = p.sw.Comment("llmguard: " + p.target + " broke; continued on " + p.next)
	p.target, p.next = p.next, ""
	p.acc.noteTarget(p.target)
	p.usage, p.usageFinal = provider.Usage{}, false
}

// chainEvents calls a, then b.
func chainEvents(a, b func(resilience.Event)) func(resilience.Event) {
	if a == nil {
		return b
	}
	return func(ev resilience.Event) { a(ev); b(ev) }
}

func (p *pump) startNow() error {
	p.started = true
	_, model, _ := strings.Cut(p.target, "/")
	return p.enc.start(model, "", nil)
}

func (p *pump) write(c *provider.Chunk) error {
	if !p.started {
		p.started = true
		model := c.Model
		if model == "" {
			_, model, _ = strings.Cut(p.target, "/")
		}
		if err := p.enc.start(model, c.ID, c.Usage); err != nil {
			return err
		}
	}
	p.acc.noteChunk(c)
	if c.FinishReason != "" {
		p.finish = c.FinishReason
	}
	if u := c.Usage; u != nil {
		p.usage.Merge(*u)
		if p.finish != "" {
			p.usageFinal = true
		}
	}
	return p.enc.chunk(c)
}

func (p *pump) end() {
	if !p.started {
		if p.startNow() != nil {
			return
		}
	}
	_ = p.enc.finish(p.finish, p.usage)
}

func randText() string { return rand.Text() }

// textTemplate is an event's JSON encoded once around the string a chunk
// carries (its text): the events that differ from it only in that string
// are written from it, byte for byte as appendJSON writes them
// (FuzzTextTemplate), without encoding the event again. A stream of a
// thousand tokens is a thousand such events.
type textTemplate struct {
	pre, post []byte
	made, ok  bool // set was called; it found the mark
}

// templateMark is the string an event is encoded with to make its
// template: what follows it in an event holds none of a client's or an
// upstream's strings, so its last occurrence is the mark.
var templateMark = "\x00llmguard-text\x00"

// templateMarkJSON is templateMark encoded.
var templateMarkJSON = appendJSON(nil, templateMark)

// set makes the template from b (kept: a copy, in one array), an event
// encoded with templateMark as its text.
func (t *textTemplate) set(b []byte) {
	mark := templateMarkJSON
	i := bytes.LastIndex(b, mark)
	t.made, t.ok = true, i >= 0
	if t.ok {
		both := append(append(make([]byte, 0, len(b)-len(mark)), b[:i]...), b[i+len(mark):]...)
		t.pre, t.post = both[:i:i], both[i:]
	}
}

// append appends the event with text in the mark's place.
func (t *textTemplate) append(dst []byte, text string) []byte {
	dst = append(dst, t.pre...)
	dst = json.AppendEscape(dst, text, 0)
	return append(dst, t.post...)
}
