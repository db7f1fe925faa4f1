package resilience

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
)

// repeatRoutes is one persistently overloaded target ("down"), a route
// sharing it ("shared"), and a healthy route ("ok").
func repeatRoutes(hold time.Duration) map[string]*Route {
	return map[string]*Route{
		"down":   {Targets: targets("a/m1"), RepeatHold: &hold},
		"shared": {Targets: targets("a/m1"), RepeatHold: &hold},
		"ok":     {Targets: targets("b/m2"), RepeatHold: &hold},
	}
}

func scoped(route, scope, prompt string) *Call {
	return &Call{Route: route, Request: userReq(prompt), RepeatScope: scope}
}

// TestRepeatHold: a call the engine retried to exhaustion leaves its
// failure held: an identical call within the hold gets it at once, with no
// upstream attempt, as ErrRepeat wrapping the first failure; once the hold
// is over the call runs again. Streams are held alike.
func TestRepeatHold(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, repeatRoutes(150*time.Second), nil)
				h.ads["a"].on("m1", reply{err: errOverloaded})
				run := func() error {
					c := scoped("down", "k1", "hello")
					if stream {
						sr, err := h.eng.Stream(context.Background(), c)
						if err == nil {
							sr.Stream.Close()
						}
						return err
					}
					_, err := h.eng.Chat(context.Background(), c)
					return err
				}
				first := run()
				failedAt := time.Now()
				if n := h.ads["a"].Calls("m1"); n != defaultMaxAttempts {
					t.Fatalf("first call: %d upstream attempts, want %d", n, defaultMaxAttempts)
				}
				var re1 *RouteError
				if !errors.As(first, &re1) || re1.Repeat != nil {
					t.Fatalf("first call: %v", first)
				}
				for _, after := range []time.Duration{2 * time.Second, 4 * time.Second, 120 * time.Second} {
					time.Sleep(after - time.Since(failedAt))
					err := run()
					var re *RouteError
					if !errors.As(err, &re) || re.Repeat == nil || !errors.Is(err, ErrRepeat) {
						t.Fatalf("repeat after %v: %v, want a held failure", after, err)
					}
					if !errors.Is(err, ErrExhausted) || re.Repeat.Of != re1 || len(re.Attempts) != 0 {
						t.Errorf("repeat after %v: Of %p (want %p), %d attempts, errors.Is ErrExhausted %v",
							after, re.Repeat.Of, re1, len(re.Attempts), errors.Is(err, ErrExhausted))
					}
					if !re.Repeat.At.Equal(failedAt) || !re.Repeat.Until.Equal(failedAt.Add(150*time.Second)) {
						t.Errorf("held from %v until %v, want %v for 150s", re.Repeat.At, re.Repeat.Until, failedAt)
					}
					if pe := provider.AsError(err); pe == nil || pe.Verdict.Class != classify.Overloaded {
						t.Errorf("the held verdict is not found by errors.As: %v", pe)
					}
					if !strings.HasPrefix(err.Error(), re1.Error()+"; repeat of a call that failed at ") ||
						!strings.Contains(err.Error(), "after 4 upstream attempts; not sent upstream again before ") {
						t.Errorf("line %q", err.Error())
					}
				}
				if n := h.ads["a"].Calls("m1"); n != defaultMaxAttempts {
					t.Errorf("%d upstream attempts after the repeats, want %d", n, defaultMaxAttempts)
				}
				time.Sleep(150*time.Second - time.Since(failedAt))
				if err := run(); errors.Is(err, ErrRepeat) {
					t.Errorf("at the hold's end: %v, want the call run again", err)
				}
				if n := h.ads["a"].Calls("m1"); n != 2*defaultMaxAttempts {
					t.Errorf("%d upstream attempts after the hold, want %d", n, 2*defaultMaxAttempts)
				}
			})
		})
	}
}

// TestRepeatReleasedOnRecovery: a target of the route answering any call
// (another request, on any route) ends the hold at once: the held failure
// is never served once the upstream answers.
func TestRepeatReleasedOnRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, repeatRoutes(150*time.Second), nil)
		h.ads["a"].on("m1", reply{err: errOverloaded}, reply{err: errOverloaded}, reply{err: errOverloaded},
			reply{err: errOverloaded}, reply{text: "back"})
		if _, err := h.eng.Chat(context.Background(), scoped("down", "k1", "hello")); err == nil {
			t.Fatal("first call succeeded")
		}
		if _, err := h.eng.Chat(context.Background(), scoped("down", "k1", "hello")); !errors.Is(err, ErrRepeat) {
			t.Fatalf("repeat: %v, want held", err)
		}
		// Another request on another route that lists the same target.
		if res, err := h.eng.Chat(context.Background(), scoped("shared", "k2", "other")); err != nil || res.Response.Text != "back" {
			t.Fatalf("other call: %v %v", res, err)
		}
		res, err := h.eng.Chat(context.Background(), scoped("down", "k1", "hello"))
		if err != nil || res.Attempts != 1 {
			t.Fatalf("repeat after recovery: %+v %v, want an upstream answer", res, err)
		}
	})
}

// TestRepeatScope: a failure is held per scope (the gateway key), route,
// fallbacks and request: any of them differing runs the call.
func TestRepeatScope(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, repeatRoutes(150*time.Second), nil)
		h.ads["a"].on("m1", reply{err: errOverloaded})
		ctx := context.Background()
		if _, err := h.eng.Chat(ctx, scoped("down", "k1", "hello")); err == nil || errors.Is(err, ErrRepeat) {
			t.Fatalf("first call: %v", err)
		}
		withFallback := scoped("down", "k1", "hello")
		withFallback.Fallbacks = []string{"a/m1"}
		for _, c := range []*Call{scoped("down", "k2", "hello"), scoped("down", "k1", "hello!"), scoped("shared", "k1", "hello"), withFallback} {
			before := h.ads["a"].Calls("m1")
			if _, err := h.eng.Chat(ctx, c); err == nil || errors.Is(err, ErrRepeat) {
				t.Errorf("scope %q route %q prompt %q fallbacks %v: %v, want run", c.RepeatScope, c.Route,
					lastUserText(c.Request), c.Fallbacks, err)
			}
			if h.ads["a"].Calls("m1") == before {
				t.Errorf("scope %q route %q: no upstream attempt", c.RepeatScope, c.Route)
			}
		}
		// Each of those is held in its own right now; the first is still held.
		if _, err := h.eng.Chat(ctx, scoped("down", "k1", "hello")); !errors.Is(err, ErrRepeat) {
			t.Errorf("first call again: %v, want held", err)
		}
		// A call without a scope is never held.
		before := h.ads["a"].Calls("m1")
		if _, err := h.eng.Chat(ctx, &Call{Route: "down", Request: userReq("hello")}); errors.Is(err, ErrRepeat) || h.ads["a"].Calls("m1") == before {
			t.Errorf("a call without a scope was held: %v", err)
		}
	})
}

// TestRepeatNotHeld: failures a client's retry costs no more than without
// the gateway are not held: a rejected request or a bad key (terminal; a
// key's breaker answers the key), a call tried once, a call its caller
// cut short, and any call on a route whose RepeatHold is 0.
func TestRepeatNotHeld(t *testing.T) {
	one := func(r Route) map[string]*Route { return map[string]*Route{"down": &r} }
	tests := []struct {
		name     string
		routes   map[string]*Route
		replies  []reply
		cancelAt time.Duration // the caller leaves after this long (0 = never)
		calls    int           // upstream calls of two identical calls
	}{
		{"invalid request", nil, []reply{{err: errInvalid}}, 0, 2},
		{"bad key", nil, []reply{{err: errAuth}}, 0, 1},
		{"tried once", one(Route{Targets: targets("a/m1"), Retry: Retry{MaxAttempts: 1}}), []reply{{err: errOverloaded}}, 0, 2},
		{"caller went away", nil, []reply{{err: errOverloaded}, {err: errOverloaded}, {hang: true}}, 10 * time.Second, 4},
		{"repeat hold 0", one(Route{Targets: targets("a/m1"), RepeatHold: new(time.Duration(0))}), []reply{{err: errOverloaded}}, 0, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				routes := tt.routes
				if routes == nil {
					routes = repeatRoutes(150 * time.Second)
				}
				h := newHarness(t, routes, nil)
				h.ads["a"].on("m1", tt.replies...)
				for range 2 {
					ctx, cancel := context.WithCancel(context.Background())
					if tt.cancelAt > 0 {
						time.AfterFunc(tt.cancelAt, cancel)
					}
					_, err := h.eng.Chat(ctx, scoped("down", "k1", "hello"))
					cancel()
					if err == nil || errors.Is(err, ErrRepeat) {
						t.Fatalf("%v, want a failure that is not held", err)
					}
				}
				if n := h.ads["a"].Calls("m1"); n != tt.calls {
					t.Errorf("%d upstream calls for two identical calls, want %d", n, tt.calls)
				}
			})
		})
	}
}

// TestRepeatNoHashOnHealthyPath: a call computes its repeat key (a hash of
// its request) only when its route may hold a live failure; healthy
// routes, and a route whose targets have answered since, compute none.
func TestRepeatNoHashOnHealthyPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, repeatRoutes(150*time.Second), nil)
		h.ads["a"].on("m1", reply{err: errOverloaded}, reply{err: errOverloaded}, reply{err: errOverloaded},
			reply{err: errOverloaded}, reply{})
		ctx := context.Background()
		keyed := func() int64 { return h.eng.repeats.keyed.Load() }
		for i := range 5 {
			if _, err := h.eng.Chat(ctx, scoped("ok", "k1", fmt.Sprint("healthy ", i))); err != nil {
				t.Fatal(err)
			}
		}
		if n := keyed(); n != 0 {
			t.Fatalf("%d repeat keys on healthy calls, want 0", n)
		}
		if _, err := h.eng.Chat(ctx, scoped("down", "k1", "hello")); err == nil {
			t.Fatal("down succeeded")
		}
		if n := keyed(); n != 1 {
			t.Fatalf("%d repeat keys after a held failure, want 1 (to store it)", n)
		}
		if _, err := h.eng.Chat(ctx, scoped("ok", "k1", "healthy")); err != nil || keyed() != 1 {
			t.Errorf("another route's call hashed its request (%d keys): %v", keyed(), err)
		}
		// A call on the holding route hashes its request to look it up;
		// the target answers it.
		if _, err := h.eng.Chat(ctx, scoped("down", "k1", "other")); err != nil || keyed() != 2 {
			t.Errorf("%d repeat keys, want 2 (a call to match on the holding route): %v", keyed(), err)
		}
		// The target answered that call: the route holds nothing live.
		for range 3 {
			if _, err := h.eng.Chat(ctx, scoped("down", "k1", "third")); err != nil {
				t.Fatal(err)
			}
		}
		if n := keyed(); n != 2 {
			t.Errorf("%d repeat keys once the target answered, want 2", n)
		}
	})
}

// TestRepeatTableBounds: the held failures are bounded by count and by
// bytes whatever clients send.
func TestRepeatTableBounds(t *testing.T) {
	tests := []struct {
		name    string
		msg     string
		maxKept int
	}{
		{"count", "529 overloaded", maxHeld},
		{"bytes", strings.Repeat("x", 2000), maxHeldBytes / (10 * 2000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rt repeatTable
			rt.init()
			pe := &provider.Error{Verdict: classify.Verdict{Class: classify.Overloaded, Message: tt.msg}}
			re := &RouteError{Route: "r", Err: ErrExhausted}
			for range 10 {
				re.Attempts = append(re.Attempts, AttemptError{Target: "a/m1", Err: pe})
			}
			n := 2 * maxHeld
			for i := range n {
				rt.c.Set(fmt.Sprint("k", i), &heldFailure{err: re})
			}
			rt.c.CleanUp()
			if kept := rt.c.EstimatedSize(); kept == 0 || kept > tt.maxKept {
				t.Errorf("kept %d of %d, want 1..%d", kept, n, tt.maxKept)
			}
		})
	}
}

// BenchmarkChatRepeatScope: a healthy call with a RepeatScope costs what one
// without costs (BenchmarkChatNoFault): no request hash while its route
// holds nothing live. "held" is a call answered with a held failure: the
// cost of hashing its request and looking it up, paid only on a route
// that holds a failure no target has answered since.
func BenchmarkChatRepeatScope(b *testing.B) {
	for _, mode := range []string{"none", "healthy", "held"} {
		b.Run(mode, func(b *testing.B) {
			eng, _ := benchEngine(b, 0)
			ctx := context.Background()
			call := &Call{Request: userReq("hello")}
			if mode != "none" {
				call.RepeatScope = "k1"
			}
			if mode == "held" {
				held := &RouteError{Route: "default", Err: ErrExhausted, Attempts: []AttemptError{
					{Target: "a/m1", Err: errOverloaded}, {Target: "a/m1", Err: errOverloaded}}}
				eng.holdFailure(ctx, eng.routes["default"], call, "", held)
			}
			b.ReportAllocs()
			for b.Loop() {
				_, err := eng.Chat(ctx, call)
				if (mode == "held") != errors.Is(err, ErrRepeat) {
					b.Fatal(err)
				}
			}
			if n := eng.repeats.keyed.Load(); mode != "held" && n != 0 {
				b.Errorf("%d repeat keys on the healthy path", n)
			}
		})
	}
}
