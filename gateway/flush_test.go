package gateway

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
)

// flushRecorder is a ResponseWriter that keeps, at each Flush, what had
// been written so far, in how many Writes, and when.
type flushRecorder struct {
	mu      sync.Mutex
	h       http.Header
	body    bytes.Buffer
	writes  int
	flushed []string
	wrote   []int
	at      []time.Time
}

func (r *flushRecorder) Header() http.Header {
	if r.h == nil {
		r.h = http.Header{}
	}
	return r.h
}
func (r *flushRecorder) WriteHeader(int) {}
func (r *flushRecorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes++
	return r.body.Write(b)
}
func (r *flushRecorder) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushed = append(r.flushed, r.body.String())
	r.wrote = append(r.wrote, r.writes)
	r.at = append(r.at, time.Now())
}

// flushes returns what was written at each flush so far.
func (r *flushRecorder) flushes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.flushed...)
}

func oaEvent(text string) string {
	return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":null}]}` + "\n\n"
}

// The gateway flushes a stream when the upstream has nothing more
// buffered (issue 19): the first token goes out alone at once, a burst of
// events the upstream sent together goes out in one flush, and an event
// that ends a read mid-way waits for nothing but the gap between flushes
// (flushGap: here the upstream sends each part at once, so each waits for
// it).
func TestStreamFlushCoalesced(t *testing.T) {
	for _, dialect := range []struct{ name, path, body string }{
		{"openai client", "/v1/chat/completions", oaBody("oai", true, "")},
		{"anthropic client", "/v1/messages", anBody("oai", true, "")},
	} {
		t.Run(dialect.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				burst, half, end := make(chan struct{}), make(chan struct{}), make(chan struct{})
				up := pipenet.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.ReadAll(r.Body)
					w.Header().Set("Content-Type", "text/event-stream")
					f := w.(http.Flusher)
					_, _ = io.WriteString(w, oaEvent("Hel"))
					f.Flush()
					<-burst
					_, _ = io.WriteString(w, oaEvent("lo ")+oaEvent("wor")+oaEvent("ld")+oaEvent("!"))
					f.Flush()
					<-half
					// An event, then half of the next: the first must not
					// wait for the second's end.
					e := oaEvent(" Bye")
					_, _ = io.WriteString(w, oaEvent(" and")+e[:20])
					f.Flush()
					<-end
					_, _ = io.WriteString(w, e[20:]+`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n"+
						`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`+"\n\ndata: [DONE]\n\n")
				}))
				defer up.Close()
				srv, _ := newGateway(t, "providers:\n  openai: {base_url: "+up.URL+"/v1, api_key: k}\nroutes:\n  oai: {targets: [openai/gpt-4o]}\n", up.Client(), nil, nil)
				rec := &flushRecorder{}
				done := make(chan struct{})
				go func() {
					defer close(done)
					srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, dialect.path, strings.NewReader(dialect.body)))
				}()
				text := func(s string) string {
					var b strings.Builder
					for _, ev := range readEvents(t, strings.NewReader(s)) {
						for _, p := range [][]any{{"choices", 0, "delta", "content"}, {"delta", "text"}} {
							if v, ok := dig(ev.Data, p...).(string); ok {
								b.WriteString(v)
							}
						}
					}
					return b.String()
				}
				step := func(what string, gap time.Duration, next chan struct{}, want []string) {
					t.Helper()
					synctest.Wait()
					time.Sleep(gap)
					synctest.Wait()
					var got []string
					for _, f := range rec.flushes() {
						got = append(got, text(f))
					}
					if strings.Join(got, "|") != strings.Join(want, "|") {
						t.Errorf("%s: text flushed at each flush %q, want %q", what, got, want)
					}
					if next != nil {
						close(next)
					}
				}
				step("first token", 0, burst, []string{"Hel"})
				step("a burst", flushGap, half, []string{"Hel", "Hello world!"})
				step("an event and half of the next", flushGap, end, []string{"Hel", "Hello world!", "Hello world! and"})
				<-done
				rec.mu.Lock()
				defer rec.mu.Unlock()
				// The burst's four events reach the response in one Write, as
				// a proxy's copy writes what it read, not one Write each.
				if len(rec.wrote) >= 2 && rec.wrote[1]-rec.wrote[0] != 1 {
					t.Errorf("the burst's events written in %d Writes, want 1", rec.wrote[1]-rec.wrote[0])
				}
				if got := text(rec.body.String()); got != "Hello world! and Bye" {
					t.Errorf("stream text %q", got)
				}
			})
		})
	}
}

// paced is a scripted stream that takes 1ms (of fake time) for each chunk
// and always says more are buffered: the upstream keeps the gateway busy.
type paced struct {
	scripted
}

func (p *paced) Recv() (provider.Chunk, error) {
	time.Sleep(time.Millisecond)
	return p.scripted.Recv()
}

func (p *paced) Buffered() bool { return len(p.chunks) > 0 }

// While the upstream keeps chunks coming, what the gateway wrote waits at
// most the flush bound (5ms) for its flush.
func TestStreamFlushBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		chunks := []provider.Chunk{{Model: "a"}}
		for range 20 {
			chunks = append(chunks, provider.Chunk{Text: "x"})
		}
		up := &paced{scripted{chunks: append(chunks, provider.Chunk{FinishReason: "stop", Usage: &provider.Usage{OutputTokens: 20}})}}
		srv, err := New(&Options{Engine: streamEngine{st: up}, Catalog: &catalog.Catalog{Providers: map[string]string{"p": ""}},
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		rec := &flushRecorder{}
		start := time.Now()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(oaBody("r", true, ""))))
		var at []time.Duration
		for _, t := range rec.at {
			at = append(at, t.Sub(start))
		}
		// Chunks come at 1ms, 2ms, … 22ms; the first is held from 1ms, so
		// the one at 6ms flushes (5ms on), the next held from 7ms, …
		want := []time.Duration{6 * time.Millisecond, 12 * time.Millisecond, 18 * time.Millisecond}
		if len(at) != len(want) || at[0] != want[0] || at[1] != want[1] || at[2] != want[2] {
			t.Errorf("flushed at %v, want %v", at, want)
		}
		if _, end, _ := streamText(t, DialectOpenAI, rec.body.Bytes()); end != "done" {
			t.Errorf("stream end %q", end)
		}
		time.Sleep(drainGrace) // the upstream's end is read in the background (drain)
	})
}

// streamEngine answers every Stream call with st.
type streamEngine struct {
	Engine
	st provider.Stream
}

func (e streamEngine) Stream(_ context.Context, c *resilience.Call) (*resilience.StreamResult, error) {
	return &resilience.StreamResult{Stream: e.st, Target: "p/a", Attempts: 1}, nil
}

func (streamEngine) Routes() map[string][]string { return map[string][]string{"r": {"p/a"}} }
