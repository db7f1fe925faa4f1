package resilience

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state/memstore"
)

func TestResultCacheBounds(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name                 string
		maxEntries, maxBytes int64
		text                 string
		maxKept              int
	}{
		{"entries bound", 4, 1 << 20, "small", 4},
		{"bytes bound", 1000, 8 << 10, strings.Repeat("x", 2000), 4}, // ~2.3 KB each in 8 KiB
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := newResultCache(tt.maxEntries, tt.maxBytes)
			for i := range 50 {
				rc.put(fmt.Sprint("k", i), &Result{Response: &provider.Response{Text: tt.text}}, now.Add(time.Hour))
			}
			rc.c.CleanUp()
			kept := 0
			for i := range 50 {
				if _, ok := rc.get(fmt.Sprint("k", i), now); ok {
					kept++
				}
			}
			if kept == 0 || kept > tt.maxKept {
				t.Errorf("kept %d entries, want 1..%d", kept, tt.maxKept)
			}
		})
	}
}

func TestResultCacheExpiryAndCopies(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rc := newResultCache(10, 1<<20)
	orig := &Result{Response: &provider.Response{Text: "a"}, Attempts: 3, Cost: 1}
	rc.put("k", orig, now.Add(time.Minute))
	orig.Response.Text = "mutated"
	got, ok := rc.get("k", now.Add(59*time.Second))
	if !ok || got.Response.Text != "a" || !got.Cached || got.Attempts != 0 || got.Cost != 0 {
		t.Fatalf("get = %+v %v", got, ok)
	}
	got.Response.Text = "changed by a caller"
	if again, _ := rc.get("k", now); again.Response.Text != "a" {
		t.Error("a caller's change reached the cache")
	}
	if _, ok := rc.get("k", now.Add(time.Minute)); ok {
		t.Error("served after its TTL")
	}
}

// TestStreamIdempotencyKey: a stream with an IdempotencyKey that ended
// properly is stored; a later duplicate, streamed or not, replays it without
// an upstream call. A stream that broke is not stored.
func TestStreamIdempotencyKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1")}}, nil)
		h.ads["a"].on("m1",
			reply{chunks: []string{"broken "}, midErr: errServer},
			reply{chunks: []string{"one ", "two"}},
			reply{text: "a different answer"})
		stream := func(key string) (*StreamResult, string, error) {
			sr, err := h.eng.Stream(context.Background(), &Call{Request: userReq("x"), IdempotencyKey: key})
			if err != nil {
				t.Fatal(err)
			}
			defer sr.Stream.Close()
			text, err := drainText(sr.Stream)
			if err == io.EOF {
				err = nil
			}
			return sr, text, err
		}
		if _, _, err := stream("k"); err == nil {
			t.Fatal("the broken stream ended without an error")
		}
		if sr, text, err := stream("k"); err != nil || sr.Cached || text != "one two" {
			t.Fatalf("after a broken stream: cached=%v text=%q err=%v, want a new upstream answer", sr.Cached, text, err)
		}
		if sr, text, err := stream("k"); err != nil || !sr.Cached || text != "one two" || sr.Target != "a/m1" {
			t.Errorf("duplicate stream: cached=%v target=%s text=%q err=%v", sr.Cached, sr.Target, text, err)
		}
		res, err := h.eng.Chat(context.Background(), &Call{Request: userReq("x"), IdempotencyKey: "k"})
		if err != nil || !res.Cached || res.Response.Text != "one two" {
			t.Errorf("duplicate chat: %+v %v", res, err)
		}
		if n := h.ads["a"].Calls("m1"); n != 2 {
			t.Errorf("%d upstream calls, want 2", n)
		}
		// A Chat's stored answer replays as a stream, finish reason and usage
		// included, the prompt usage at the start as a stream says it.
		if _, err := h.eng.Chat(context.Background(), &Call{Request: userReq("x"), IdempotencyKey: "c"}); err != nil {
			t.Fatal(err)
		}
		sr, err := h.eng.Stream(context.Background(), &Call{Request: userReq("x"), IdempotencyKey: "c"})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := providertest.Collect(sr.Stream)
		want := []provider.Chunk{{Text: "a different answer", Model: "m1", Usage: &provider.Usage{InputTokens: 1000}},
			{FinishReason: provider.FinishStop, Usage: &provider.Usage{InputTokens: 1000, OutputTokens: 500}}}
		if diff := cmp.Diff(want, got); diff != "" || !sr.Cached {
			t.Errorf("replayed chat (cached=%v) (-want +got):\n%s", sr.Cached, diff)
		}
		if n := h.ads["a"].Calls("m1"); n != 3 {
			t.Errorf("%d upstream calls, want 3", n)
		}
	})
}

// TestStreamIdempotencyKeyClosedAfterFinish: a caller may close a stream
// once it has its finish reason without reading to the end (the gateway
// does): the answer is complete and stored. Closed earlier, it is not.
func TestStreamIdempotencyKeyClosedAfterFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1")}}, nil)
		h.ads["a"].on("m1",
			reply{chunks: []string{"one ", "two"}, finish: provider.FinishStop},
			reply{chunks: []string{"three"}, finish: provider.FinishStop})
		h.ads["a"].on("m2", reply{chunks: []string{"done"}, finish: provider.FinishStop})
		for _, tc := range []struct {
			route  string
			reads  int // chunks read before Close
			cached bool
		}{
			{"a/m1", 1, false}, // closed before the finish reason
			{"a/m1", 3, false}, // the next call runs upstream, read to its end...
			{"a/m1", 0, true},  // ...and is stored
			{"a/m2", 1, false}, // its one chunk carries the finish reason
			{"a/m2", 0, true},
		} {
			sr, err := h.eng.Stream(context.Background(), &Call{Route: tc.route, Request: userReq("x"), IdempotencyKey: tc.route})
			if err != nil {
				t.Fatal(err)
			}
			for range tc.reads {
				if _, err := sr.Stream.Recv(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
			}
			sr.Stream.Close()
			if sr.Cached != tc.cached {
				t.Errorf("%s after %d reads: cached = %v, want %v", tc.route, tc.reads, sr.Cached, tc.cached)
			}
		}
		if n := h.ads["a"].Calls("m1") + h.ads["a"].Calls("m2"); n != 3 {
			t.Errorf("%d upstream calls, want 3", n)
		}
	})
}

// TestResultsShared: two engines on one ResultStore (two replicas). The
// same IdempotencyKey on both at once makes one upstream call, whose answer
// both return; when the first call fails, its duplicate on the other engine
// claims the key and calls in turn.
func TestResultsShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		results := memstore.NewResults()
		routes := map[string]*Route{"default": {Targets: targets("a/m1"), Retry: Retry{MaxAttempts: 1}}}
		share := func(o *Options) { o.Results = results }
		ha, hb := newHarness(t, routes, share), newHarness(t, routes, share)
		ha.ads["a"].on("m1", reply{delay: time.Second, text: "first"})
		hb.ads["a"].on("m1", reply{text: "second"})
		call := &Call{Route: "default", Request: userReq("hello"), IdempotencyKey: "k1"}
		var ra, rb *Result
		var erra, errb error
		done := make(chan struct{})
		go func() { ra, erra = ha.eng.Chat(context.Background(), call); close(done) }()
		synctest.Wait() // A's call holds the claim
		rb, errb = hb.eng.Chat(context.Background(), call)
		<-done
		if erra != nil || errb != nil || ra.Response.Text != "first" || rb.Response.Text != "first" || !rb.Cached {
			t.Fatalf("A: %+v %v, B: %+v %v; want both A's answer, B's cached", ra, erra, rb, errb)
		}
		if n := ha.ads["a"].Calls("m1") + hb.ads["a"].Calls("m1"); n != 1 {
			t.Errorf("%d upstream calls, want 1", n)
		}

		ha.ads["a"].on("m1", reply{delay: time.Second, err: errOverloaded})
		call2 := &Call{Route: "default", Request: userReq("hello"), IdempotencyKey: "k2"}
		done = make(chan struct{})
		go func() { _, erra = ha.eng.Chat(context.Background(), call2); close(done) }()
		synctest.Wait()
		rb, errb = hb.eng.Chat(context.Background(), call2)
		<-done
		if erra == nil || errb != nil || rb.Response.Text != "second" || rb.Cached {
			t.Errorf("after A's call failed: A err=%v, B %+v %v; want B's own answer", erra, rb, errb)
		}
	})
}

// TestStreamIdempotencyKeyStoredWhenComplete: the answer is stored once it
// is complete (its usage with or after the finish reason), before the
// stream ends or is closed: the gateway reads a complete stream on to its
// terminator in the background after the client has its answer, and a
// duplicate that comes meanwhile is a replay, not a second upstream call.
func TestStreamIdempotencyKeyStoredWhenComplete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		usage := &provider.Usage{InputTokens: 3, OutputTokens: 2}
		held := func(ctx context.Context) provider.Stream {
			return &heldStream{ctx: ctx, chunks: []provider.Chunk{{Text: "one "}, {Text: "two", FinishReason: provider.FinishStop}, {Usage: usage}}}
		}
		ad := &providertest.Script{Empty: errServer, Replies: []any{held, held}}
		eng, err := New(&Options{Adapters: map[string]provider.Adapter{"p": ad}, Routes: map[string]Route{"r": {Targets: targets("p/a")}}})
		if err != nil {
			t.Fatal(err)
		}
		call := func() *StreamResult {
			sr, err := eng.Stream(context.Background(), &Call{Route: "r", Request: userReq("x"), IdempotencyKey: "k"})
			if err != nil {
				t.Fatal(err)
			}
			return sr
		}
		first := call()
		defer first.Stream.Close()
		for range 3 { // the answer, complete; its terminator has not come
			if _, err := first.Stream.Recv(); err != nil {
				t.Fatal(err)
			}
		}
		dup := call()
		defer dup.Stream.Close()
		if !dup.Cached || len(ad.Requests()) != 1 {
			t.Errorf("duplicate: cached %v after %d upstream calls; want the first call's answer replayed", dup.Cached, len(ad.Requests()))
		}
	})
}

// heldStream sends its chunks, then holds its end until ctx is done.
type heldStream struct {
	ctx    context.Context
	chunks []provider.Chunk
}

func (s *heldStream) Recv() (provider.Chunk, error) {
	if len(s.chunks) == 0 {
		<-s.ctx.Done()
		return provider.Chunk{}, s.ctx.Err()
	}
	c := s.chunks[0]
	s.chunks = s.chunks[1:]
	return c, nil
}
func (s *heldStream) Close() error      { return nil }
func (s *heldStream) RequestID() string { return "req_held" }
