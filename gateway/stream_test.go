package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// scripted is an upstream stream that yields its chunks, then either ends
// (io.EOF), fails with err, or, with block, waits for its context like a
// stalled connection.
type scripted struct {
	ctx    context.Context
	chunks []provider.Chunk
	err    error
	block  bool
	gap    time.Duration // the wait before each chunk
	closed atomic.Bool
}

func (s *scripted) Recv() (provider.Chunk, error) {
	if len(s.chunks) > 0 {
		time.Sleep(s.gap)
		c := s.chunks[0]
		s.chunks = s.chunks[1:]
		return c, nil
	}
	if s.block {
		<-s.ctx.Done()
		return provider.Chunk{}, &provider.Error{Err: s.ctx.Err(), Verdict: classify.Verdict{Class: classify.Network, Message: "stream read: context canceled"}}
	}
	if s.err != nil {
		return provider.Chunk{}, s.err
	}
	return provider.Chunk{}, io.EOF
}

func (s *scripted) Close() error      { s.closed.Store(true); return nil }
func (s *scripted) RequestID() string { return "req_script" }

// scriptEngine answers every Stream call with the next scripted stream. It
// stands in for the engine only where a real upstream cannot produce the
// situation (an upstream that stops sending after a complete answer).
type scriptEngine struct {
	Engine
	streams []*scripted
	calls   []*resilience.Call
}

func (e *scriptEngine) Stream(ctx context.Context, c *resilience.Call) (*resilience.StreamResult, error) {
	e.calls = append(e.calls, c)
	if len(e.streams) == 0 {
		return nil, &resilience.RouteError{Route: c.Route, Err: resilience.ErrExhausted}
	}
	s := e.streams[0]
	e.streams = e.streams[1:]
	s.ctx = ctx
	return &resilience.StreamResult{Stream: s, Target: c.Route, Attempts: 1}, nil
}

func (e *scriptEngine) Routes() map[string][]string {
	return map[string][]string{"r": {"p/a", "p/b"}}
}

func serveScripted(t *testing.T, e *scriptEngine, cfg *catalog.Catalog, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	if cfg == nil {
		cfg = &catalog.Catalog{}
	}
	cfg.Providers = map[string]string{"p": ""}
	srv, err := New(&Options{Engine: e, Catalog: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	return rec
}

func TestStreamFinalisedWithoutTerminator(t *testing.T) {
	// The upstream sent a complete answer with its usage, then went silent
	// instead of sending [DONE]: the client gets its end at once, and the
	// upstream is closed once drainGrace has passed waiting for it.
	synctest.Test(t, func(t *testing.T) {
		up := &scripted{block: true, chunks: []provider.Chunk{{Text: "Hi", Model: "a"}, {FinishReason: "stop"},
			{Usage: &provider.Usage{InputTokens: 3, OutputTokens: 1}}}}
		e := &scriptEngine{streams: []*scripted{up}}
		start := time.Now()
		rec := serveScripted(t, e, nil, "/v1/chat/completions", oaBody("r", true, `,"stream_options":{"include_usage":true}`))
		if waited := time.Since(start); waited != 0 {
			t.Errorf("finalising waited %v of fake time for a terminator", waited)
		}
		text, end, evs := streamText(t, DialectOpenAI, rec.Body.Bytes())
		if text != "Hi" || end != "done" || dig(evs[len(evs)-2].Data, "usage", "total_tokens") != 4.0 {
			t.Errorf("text %q end %s events %v", text, end, evs)
		}
		time.Sleep(drainGrace)
		synctest.Wait()
		if !up.closed.Load() {
			t.Error("upstream stream not closed")
		}
	})
}

func TestStreamStallEndsWithError(t *testing.T) {
	// A stall after tokens went out, with no target to continue on: the
	// watchdog ends it with an error event (fake time, no real wait).
	synctest.Test(t, func(t *testing.T) {
		up := &scripted{block: true, chunks: []provider.Chunk{{Text: "Hel"}}}
		e := &scriptEngine{streams: []*scripted{up}}
		rec := serveScripted(t, e, nil, "/v1/messages", anBody("r", true, ""))
		text, end, evs := streamText(t, DialectAnthropic, rec.Body.Bytes())
		if text != "Hel" || end != "error" {
			t.Fatalf("text %q end %s events %v", text, end, evs)
		}
		if msg, _ := dig(evs[len(evs)-1].Data, "error", "message").(string); !strings.Contains(msg, "stalled") {
			t.Errorf("error message %q", msg)
		}
	})
}

func TestStreamStallCountsFromTheLastChunk(t *testing.T) {
	// Chunks 1.5 minutes apart, under the 2-minute idle timeout, go on for
	// 6 minutes; then silence ends the stream 2 minutes after the last
	// chunk (fake time).
	synctest.Test(t, func(t *testing.T) {
		var chunks []provider.Chunk
		for range 4 {
			chunks = append(chunks, provider.Chunk{Text: "a"})
		}
		up := &scripted{block: true, gap: 90 * time.Second, chunks: chunks}
		e := &scriptEngine{streams: []*scripted{up}}
		start := time.Now()
		rec := serveScripted(t, e, nil, "/v1/chat/completions", oaBody("r", true, ""))
		text, end, _ := streamText(t, DialectOpenAI, rec.Body.Bytes())
		if text != "aaaa" || end != "error" {
			t.Fatalf("text %q end %s", text, end)
		}
		if took, want := time.Since(start), 4*90*time.Second+2*time.Minute; took != want {
			t.Errorf("stream ended after %v, want %v (2 minutes after its last chunk)", took, want)
		}
	})
}

// TestStreamContinuation: the engine continues a stream that broke after
// its first token; the gateway relays it and says so in an SSE comment.
func TestStreamContinuation(t *testing.T) {
	broken := &provider.Error{AfterFirstToken: true, Verdict: classify.Verdict{Class: classify.Overloaded,
		Message: "overloaded_error: Overloaded (request-id req_1)"}}
	prefill := &catalog.Catalog{Models: map[string]catalog.Model{"p/b": {Prefill: true}}}
	tests := []struct {
		name    string
		cfg     *catalog.Catalog
		streams []*scripted
		text    string
		end     string
		calls   int
	}{
		{
			name: "prefill continues after trailing whitespace",
			cfg:  prefill,
			streams: []*scripted{
				{chunks: []provider.Chunk{{Text: "Hello "}}, err: broken},
				{chunks: []provider.Chunk{{Text: " world"}, {FinishReason: "stop"}}},
			},
			text: "Hello world", end: "done", calls: 2,
		},
		{
			// Issue 13 item 1: the answer is regenerated there, and goes on
			// only if it repeats what the client has.
			name: "no prefill capability: a regeneration that diverges ends with an error",
			cfg:  &catalog.Catalog{},
			streams: []*scripted{
				{chunks: []provider.Chunk{{Text: "Hello"}}, err: broken},
				{chunks: []provider.Chunk{{Text: "Goodbye"}, {FinishReason: "stop"}}},
			},
			text: "Hello", end: "error", calls: 2,
		},
		{
			name: "tool call sent: no continuation",
			cfg:  prefill,
			streams: []*scripted{
				{chunks: []provider.Chunk{{ToolCall: &provider.ToolCallDelta{ID: "c", Name: "f", Arguments: "{"}}}, err: broken},
			},
			end: "error", calls: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ad := &providertest.Script{Empty: &provider.Error{Provider: "p", Verdict: classify.Verdict{Class: classify.ServerError, Status: 500,
					Scope: classify.ScopeModel, Retryable: true, Fallback: true, Message: "500 server_error: nothing scripted"}}}
				for _, s := range tt.streams {
					ad.Replies = append(ad.Replies, func(ctx context.Context) provider.Stream { s.ctx = ctx; return s })
				}
				tt.cfg.Providers = map[string]string{"p": ""}
				eng, err := resilience.New(&resilience.Options{Adapters: map[string]provider.Adapter{"p": ad}, Catalog: tt.cfg,
					Routes: map[string]resilience.Route{"r": {Targets: []resilience.Target{{Name: "p/a"}, {Name: "p/b"}}}},
					Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				srv, err := New(&Options{Engine: eng, Catalog: tt.cfg, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				rec := httptest.NewRecorder()
				srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(oaBody("r", true, ""))))
				text, end, evs := streamText(t, DialectOpenAI, rec.Body.Bytes())
				if text != tt.text || end != tt.end || len(ad.Requests()) != tt.calls {
					t.Fatalf("text %q end %s calls %d; events %v", text, end, len(ad.Requests()), evs)
				}
				if tt.end == "done" {
					if !strings.Contains(rec.Body.String(), ": llmguard: p/a broke; continued on p/b\n") {
						t.Errorf("no continuation comment in %s", rec.Body)
					}
					c := ad.Requests()[1]
					last := c.Messages[len(c.Messages)-1]
					if c.Model != "b" || last.Role != provider.RoleAssistant || last.Content[0].Text != "Hello" {
						t.Errorf("continuation call to %s with last message %+v", c.Model, last)
					}
					if n := len(ad.Requests()[0].Messages); n != 1 {
						t.Errorf("the original request was modified: %d messages", n)
					}
				}
			})
		})
	}
}

func TestAnthropicBetaHeaderForwarded(t *testing.T) {
	for _, tt := range []struct{ path, body, want string }{
		{"/v1/messages", anBody("r", true, ""), "a,b"},
		{"/v1/chat/completions", oaBody("r", true, ""), ""}, // not an Anthropic client
	} {
		e := &scriptEngine{streams: []*scripted{{chunks: []provider.Chunk{{Text: "x"}}}}}
		srv, err := New(&Options{Engine: e, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, tt.path, strings.NewReader(tt.body))
		req.Header.Add("Anthropic-Beta", "a")
		req.Header.Add("Anthropic-Beta", "b")
		srv.Handler().ServeHTTP(httptest.NewRecorder(), req)
		if len(e.calls) != 1 || e.calls[0].Request.Headers["anthropic-beta"] != tt.want {
			t.Errorf("%s: calls %d, headers %v, want anthropic-beta %q", tt.path, len(e.calls), e.calls[0].Request.Headers, tt.want)
		}
	}
}
