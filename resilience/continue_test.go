package resilience

import (
	"context"
	"io"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
)

// chunkStream is a provider.Stream over fixed chunks, then err (io.EOF when nil).
type chunkStream struct {
	chunks []provider.Chunk
	err    error
}

func (s *chunkStream) Recv() (provider.Chunk, error) {
	if len(s.chunks) == 0 {
		if s.err != nil {
			return provider.Chunk{}, s.err
		}
		return provider.Chunk{}, io.EOF
	}
	c := s.chunks[0]
	s.chunks = s.chunks[1:]
	return c, nil
}
func (s *chunkStream) Close() error      { return nil }
func (s *chunkStream) RequestID() string { return "" }

func TestStreamContinues(t *testing.T) {
	broken := perr(classify.Overloaded, 529, classify.ScopeModel, true, true, 0)
	text := func(s ...string) []provider.Chunk {
		cs := make([]provider.Chunk, len(s))
		for i, t := range s {
			cs[i] = provider.Chunk{Text: t}
		}
		return cs
	}
	stop := provider.Chunk{FinishReason: "stop"}
	tests := []struct {
		name    string
		prefill bool // p/b accepts a prefill
		relayed bool // the request is a relayed Responses API body
		replies []any
		text    string
		err     bool // the stream ends with the break's error
		calls   int
		pre     string // the continuation's prefill ("": none)
	}{
		{name: "prefill continues after trailing whitespace", prefill: true, replies: []any{
			&chunkStream{chunks: text("Hello "), err: broken}, &chunkStream{chunks: append(text(" world"), stop)}},
			text: "Hello world", calls: 2, pre: "Hello"},
		{name: "no prefill capability: an identical regeneration continues", replies: []any{
			&chunkStream{chunks: text("Hello"), err: broken}, &chunkStream{chunks: append(text("Hello", " world"), stop)}},
			text: "Hello world", calls: 2},
		{name: "no prefill capability: a regeneration that diverges ends with the error", replies: []any{
			&chunkStream{chunks: text("Hello"), err: broken}, &chunkStream{chunks: append(text("Hi there"), stop)}},
			text: "Hello", err: true, calls: 2},
		{name: "no prefill capability: a failed regeneration ends with the break's error", replies: []any{
			&chunkStream{chunks: text("Hello"), err: broken}, errInvalid},
			text: "Hello", err: true, calls: 2},
		{name: "tool call sent: no continuation", prefill: true, replies: []any{
			&chunkStream{chunks: []provider.Chunk{{ToolCall: &provider.ToolCallDelta{ID: "c", Name: "f", Arguments: "{"}}}, err: broken}},
			err: true, calls: 1},
		{name: "relayed Responses events: no continuation", prefill: true, relayed: true, replies: []any{
			&chunkStream{chunks: []provider.Chunk{{Text: "Hel", Raw: &provider.RawEvent{Name: "response.output_text.delta"}}}, err: broken}},
			text: "Hel", err: true, calls: 1},
		{name: "prefill rejected: an identical regeneration continues", prefill: true, replies: []any{
			&chunkStream{chunks: text("Hello"), err: broken}, errInvalid,
			&chunkStream{chunks: append(text("Hel", "lo wor", "ld"), stop)}},
			text: "Hello world", calls: 3, pre: "Hello"},
		{name: "prefill rejected: a regeneration that diverges ends with the error", prefill: true, replies: []any{
			&chunkStream{chunks: text("Hello"), err: broken}, errInvalid,
			&chunkStream{chunks: append(text("Help"), stop)}},
			text: "Hello", err: true, calls: 3, pre: "Hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ad := &providertest.Script{Empty: errServer, Replies: tt.replies}
				cat := &catalog.Catalog{Models: map[string]catalog.Model{"p/b": {Prefill: tt.prefill}}}
				eng, err := New(&Options{Adapters: map[string]provider.Adapter{"p": ad}, Catalog: cat,
					Routes: map[string]Route{"r": {Targets: targets("p/a", "p/b")}}})
				if err != nil {
					t.Fatal(err)
				}
				req := userReq("hi")
				if tt.relayed {
					req.Passthrough = &provider.Passthrough{Dialect: provider.DialectResponses, Body: []byte(`{}`)}
				}
				var conts []Event
				sr, err := eng.Stream(context.Background(), &Call{Route: "r", Request: req, OnEvent: func(ev Event) {
					if ev.Kind == EventContinue {
						conts = append(conts, ev)
					}
				}})
				if err != nil {
					t.Fatal(err)
				}
				defer sr.Stream.Close()
				got, end := drainText(sr.Stream)
				broke := end != io.EOF
				if pe := provider.AsError(end); broke && (pe == nil || !pe.AfterFirstToken || pe.Verdict.Class != classify.Overloaded) {
					t.Errorf("the stream ended with %v, want the break", end)
				}
				if got != tt.text || broke != tt.err || len(ad.Requests()) != tt.calls {
					t.Fatalf("text %q, ended %v, calls %d; want %q, %d", got, end, len(ad.Requests()), tt.text, tt.calls)
				}
				if n := len(ad.Requests()[0].Messages); n != 1 {
					t.Errorf("the original request was modified: %d messages", n)
				}
				if want := !tt.err; (len(conts) == 1) != want || want && (conts[0].From != "p/a" || conts[0].Target != "p/b") {
					t.Errorf("continue events %+v", conts)
				}
				if tt.calls >= 2 {
					checkContinuation(t, ad.Requests()[1], tt.pre)
				}
			})
		})
	}
}

// drainText reads st to its end: the text, and the error it ended with.
func drainText(st provider.Stream) (string, error) {
	cs, err := providertest.Collect(st)
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.Text)
	}
	return b.String(), err
}

// checkContinuation checks the request a continuation sent to p/b: the
// prefill pre as the last message, or ("") a regeneration without one.
func checkContinuation(t *testing.T, c *provider.Request, pre string) {
	t.Helper()
	last := c.Messages[len(c.Messages)-1]
	switch {
	case pre == "" && (last.Role == provider.RoleAssistant || c.Model != "b"):
		t.Errorf("regeneration call to %s with a prefill: %+v", c.Model, last)
	case pre != "" && (c.Model != "b" || last.Role != provider.RoleAssistant || last.Content[0].Text != pre || c.Passthrough != nil):
		t.Errorf("continuation call to %s with last message %+v", c.Model, last)
	}
}

// A target that answered a prefill with a 400 is not sent one again: the
// next broken stream is regenerated there at once, and the 400 never
// reaches the caller (issue 13 item 1).
func TestPrefillRejectionRemembered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		broken := perr(classify.Overloaded, 529, classify.ScopeModel, true, true, 0)
		stop := provider.Chunk{FinishReason: "stop"}
		ad := &providertest.Script{Empty: errServer, Replies: []any{
			&chunkStream{chunks: []provider.Chunk{{Text: "Hello"}}, err: broken}, errInvalid,
			&chunkStream{chunks: []provider.Chunk{{Text: "Hello world"}, stop}},
			&chunkStream{chunks: []provider.Chunk{{Text: "Hello"}}, err: broken},
			&chunkStream{chunks: []provider.Chunk{{Text: "Hello world"}, stop}},
		}}
		cat := &catalog.Catalog{Models: map[string]catalog.Model{"p/b": {Prefill: true}}}
		eng, err := New(&Options{Adapters: map[string]provider.Adapter{"p": ad}, Catalog: cat,
			Routes: map[string]Route{"r": {Targets: targets("p/a", "p/b")}}})
		if err != nil {
			t.Fatal(err)
		}
		for call := range 2 {
			sr, err := eng.Stream(context.Background(), &Call{Route: "r", Request: userReq("hi")})
			if err != nil {
				t.Fatal(err)
			}
			if got := Streamed(t, sr.Stream); got != "Hello world" {
				t.Errorf("call %d: %q", call, got)
			}
		}
		prefills := 0
		for _, r := range ad.Requests() {
			if r.Messages[len(r.Messages)-1].Role == provider.RoleAssistant {
				prefills++
			}
		}
		if len(ad.Requests()) != 5 || prefills != 1 {
			t.Errorf("%d requests, %d with a prefill; want 5, 1", len(ad.Requests()), prefills)
		}
	})
}

// A continuation never adds thinking blocks after the text the client has.
func TestSplicedDropsThinking(t *testing.T) {
	s := &spliced{Stream: &chunkStream{chunks: []provider.Chunk{
		{Thinking: &provider.ThinkingDelta{Index: 0, Type: provider.PartThinking, Thinking: "again"}},
		{Thinking: &provider.ThinkingDelta{Index: 0, Signature: "sig"}},
		{Text: " more"},
	}}, skip: " "}
	got, _ := providertest.Collect(s)
	want := []provider.Chunk{{}, {}, {Text: "more"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("continuation chunks (-want +got):\n%s", d)
	}
}
