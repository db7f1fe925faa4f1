package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
	"github.com/llmguard/llmguard/state/redisstore"
	"github.com/llmguard/llmguard/state/redisstore/redistest"
)

// nopAdapter answers at once with resp: what is measured is the engine
// and its store.
type nopAdapter struct{ resp *provider.Response }

func (nopAdapter) Name() string { return "a" }
func (a nopAdapter) Chat(context.Context, *provider.Request) (*provider.Response, error) {
	return a.resp, nil
}
func (nopAdapter) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	return nil, &provider.Error{Err: errors.ErrUnsupported, Verdict: classify.Verdict{Class: classify.Unknown,
		Scope: classify.ScopeRequest, Fallback: true, Message: "does not stream"}} // a Chat is then a plain Chat
}

// engineOn is an engine on st whose route falls back from a/m1 to a/m2.
// announce: every answer announces a rate limit far from reached, as
// OpenAI's and Anthropic's do, so the target is paced by a shared bucket.
func engineOn(tb testing.TB, st state.Store, announce bool) (*resilience.Engine, *resilience.Call) {
	tb.Helper()
	resp := &provider.Response{Text: "ok", Usage: provider.Usage{InputTokens: 10, OutputTokens: 5}}
	if announce {
		resp.RateLimit = &provider.RateLimit{Requests: provider.Quota{Limit: 1_000_000, Remaining: 999_999, Known: true,
			Reset: time.Now().Add(time.Hour)}}
	}
	eng, err := resilience.New(&resilience.Options{
		Routes:   map[string]resilience.Route{"default": {Targets: []resilience.Target{{Name: "a/m1"}, {Name: "a/m2"}}}},
		Adapters: map[string]provider.Adapter{"a": nopAdapter{resp: resp}},
		Store:    st,
	})
	if err != nil {
		tb.Fatal(err)
	}
	msg := provider.Message{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hello"}}}
	return eng, &resilience.Call{Request: &provider.Request{Messages: []provider.Message{msg}}}
}

// One call on a healthy target makes one round trip to Redis before it
// returns (its key's and its target's records read together, for the
// walk's look at a server's wait and admission both), two on a paced
// target (its turn taken from the shared bucket), and one or two after it
// (the announcement and the success, written together when the second
// comes before the first is written).
func TestRoundTripsPerCall(t *testing.T) {
	srv := redistest.Start(t)
	for _, tc := range []struct {
		name          string
		announce      bool
		onPath, later int64 // later: at most
	}{
		{"unpaced", false, 1, 1},
		{"paced", true, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t, srv, nil)
			eng, call := engineOn(t, st, tc.announce)
			ctx := context.Background()
			for range 2 { // the scripts loaded, the bucket known
				if _, err := eng.Chat(ctx, call); err != nil {
					t.Fatal(err)
				}
			}
			const calls = 20
			path0, later0 := redisstore.RoundTrips(t, st)
			for range calls {
				p, l := redisstore.RoundTrips(t, st) // the last call's writes done: the count is exact
				if _, err := eng.Chat(ctx, call); err != nil {
					t.Fatal(err)
				}
				if p2, l2 := redisstore.RoundTrips(t, st); p2-p != tc.onPath || l2-l < 1 || l2-l > tc.later {
					t.Fatalf("one call made %d round trips on its path and %d after, want %d and 1 to %d", p2-p, l2-l, tc.onPath, tc.later)
				}
			}
			path, later := redisstore.RoundTrips(t, st)
			t.Logf("%d calls: %d round trips on their path, %d after", calls, path-path0, later-later0)
			b, err := st.Breaker(ctx, "target/a/m1")
			if err != nil || b.WindowCalls < calls {
				t.Fatalf("the successes were not all counted: %d, %v", b.WindowCalls, err)
			}
		})
	}
}

// BenchmarkPerCall is the latency the store adds to a call: one Chat
// through the engine to an adapter that answers at once (route a/m1 then
// a/m2), on memstore and on a redis-server on loopback, on an unpaced
// target and on one paced by announced rate limits, with the p50 and p99
// of the calls (one caller at a time: the latency a request sees) and
// the round trips to Redis per call on its path. The speed target is a
// Redis p50 under 300 µs on loopback (issue 14).
func BenchmarkPerCall(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, st state.Store, announce bool) {
		eng, call := engineOn(b, st, announce)
		if _, err := eng.Chat(ctx, call); err != nil {
			b.Fatal(err)
		}
		rs, _ := st.(*redisstore.Store)
		var trips0 int64
		if rs != nil {
			trips0, _ = redisstore.RoundTrips(b, rs)
		}
		n := latency(b, func(int) {
			if _, err := eng.Chat(ctx, call); err != nil {
				b.Fatal(err)
			}
		})
		if rs != nil {
			trips, _ := redisstore.RoundTrips(b, rs)
			b.ReportMetric(float64(trips-trips0)/float64(n), "trips/call")
		}
	}
	for _, announce := range []bool{false, true} {
		name := "unpaced"
		if announce {
			name = "paced"
		}
		b.Run(name+"/memstore", func(b *testing.B) { run(b, memstore.New(), announce) })
		b.Run(name+"/redis", func(b *testing.B) { run(b, newStore(b, redistest.Start(b), nil), announce) })
	}
}
