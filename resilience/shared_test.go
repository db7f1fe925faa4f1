package resilience

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/catalog"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
)

// TestNoPrefillShared: engine A learns that p/b rejects an assistant
// prefill (a 400 to its continuation); engine B on the same store
// continues there by regenerating at once, without the failing call.
func TestNoPrefillShared(t *testing.T) {
	for _, shared := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			broken := perr(classify.Overloaded, 529, classify.ScopeModel, true, true, 0)
			text := func(s ...string) []provider.Chunk {
				cs := make([]provider.Chunk, len(s))
				for i, t := range s {
					cs[i] = provider.Chunk{Text: t}
				}
				return append(cs, provider.Chunk{FinishReason: "stop"})
			}
			cat := &catalog.Catalog{Models: map[string]catalog.Model{"p/b": {Prefill: true}}}
			st := memstore.New()
			stream := func(ad *providertest.Script) string {
				o := &Options{Adapters: map[string]provider.Adapter{"p": ad}, Catalog: cat,
					Routes: map[string]Route{"r": {Targets: targets("p/a", "p/b")}}}
				if shared {
					o.Store = st
				}
				eng, err := New(o)
				if err != nil {
					t.Fatal(err)
				}
				sr, err := eng.Stream(context.Background(), &Call{Route: "r", Request: userReq("hi")})
				if err != nil {
					t.Fatal(err)
				}
				defer sr.Stream.Close()
				got, _ := drainText(sr.Stream)
				return got
			}
			a := &providertest.Script{Empty: errServer, Replies: []any{&chunkStream{chunks: text("Hello")[:1], err: broken}, errInvalid,
				&chunkStream{chunks: text("Hello", " world")}}}
			if got := stream(a); got != "Hello world" || len(a.Requests()) != 3 {
				t.Fatalf("A: %q after %d calls", got, len(a.Requests()))
			}
			b := &providertest.Script{Empty: errServer, Replies: []any{&chunkStream{chunks: text("Hello")[:1], err: broken},
				&chunkStream{chunks: text("Hello", " world")}, &chunkStream{chunks: text("Hello", " world")}}}
			got := stream(b)
			if shared {
				if got != "Hello world" || len(b.Requests()) != 2 {
					t.Errorf("B: %q after %d calls, want the regeneration as its second", got, len(b.Requests()))
				}
				checkContinuation(t, b.Requests()[1], "")
			} else if len(b.Requests()) < 2 || b.Requests()[1].Messages[len(b.Requests()[1].Messages)-1].Role != provider.RoleAssistant {
				t.Errorf("with a store each, B's continuation did not try the prefill: %d calls", len(b.Requests()))
			}
		})
	}
}

// TestWholeShared: a stream that broke during an answer makes engine A ask
// for the answers of p/b whole for a while; engine B on the same store does
// too from its first Chat.
func TestWholeShared(t *testing.T) {
	for _, shared := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			st := memstore.New()
			routes := map[string]*Route{"default": {Targets: targets("a/m1"), Breaker: Breaker{Cooldown: 30 * time.Second}}}
			opt := func(o *Options) {
				if shared {
					o.Store = st
				}
			}
			ha, hb := newHarness(t, routes, opt), newHarness(t, routes, opt)
			ha.ads["a"].on("m1", reply{chunks: []string{"he"}, midErr: perr(classify.Overloaded, 529, classify.ScopeModel, true, true, 0)}, reply{})
			if res, err := ha.eng.Chat(context.Background(), &Call{Request: userReq("x")}); err != nil || res.Response.RequestID != "req_ok" {
				t.Fatalf("A: res %+v err %v; want the whole answer", res, err)
			}
			res, err := hb.eng.Chat(context.Background(), &Call{Request: userReq("x")})
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{true: "req_ok", false: "req_stream"}[shared]; res.Response.RequestID != want {
				t.Errorf("B (store shared: %v) answered by %s, want %s", shared, res.Response.RequestID, want)
			}
			if b, _ := st.Breaker(context.Background(), "target/a/m1"); shared && b.Facts.WholeUntil.IsZero() {
				t.Errorf("the record holds no fact: %+v", b)
			}
		})
	}
}

// TestHedgeSkipsServerWait: a hedge does not go to a target that a server
// asked another engine's call to keep off (its WaitUntil in the shared
// store); it goes to the next one.
func TestHedgeSkipsServerWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := memstore.New()
		if _, err := st.UpdateBreaker(context.Background(), "target/b/m2", func(b *state.Breaker) bool {
			b.WaitUntil, b.WaitBy = time.Now().Add(5*time.Second), "another-replica"
			return true
		}); err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1", "b/m2", "c/m3"), HedgeAfter: 500 * time.Millisecond}},
			func(o *Options) { o.Store = st })
		h.ads["a"].on("m1", reply{delay: 2 * time.Second})
		res, err := h.chat("default")
		if err != nil || res.Target != "c/m3" || h.ads["b"].Calls("m2") != 0 {
			t.Errorf("res %+v err %v, b/m2 called %d times; want the hedge on c/m3", res, err, h.ads["b"].Calls("m2"))
		}
	})
}
