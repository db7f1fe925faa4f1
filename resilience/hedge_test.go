package resilience

import (
	"context"
	"errors"
	"github.com/llmguard/llmguard/catalog"
	"testing"
	"testing/synctest"
	"time"
)

// TestHedgeObeysTheWalk: a hedge is an attempt like any other. It counts
// toward max_total_attempts, only goes to a target the fallback rules allow
// (from the failure the call is falling back from, and from the primary's
// failure while the hedge runs), and a target the hedge tried is not tried
// again as a plain fallback in the same call.
func TestHedgeObeysTheWalk(t *testing.T) {
	windows := map[string]catalog.Model{
		"a/m1": {ContextWindow: 8000}, "b/m2": {ContextWindow: 200000}, "c/m3": {ContextWindow: 8000},
	}
	tests := []struct {
		name     string
		route    Route
		script   map[string][]reply // "provider/model" -> replies
		want     string             // target that answers ("" = the call fails)
		wantErr  error
		calls    map[string]int
		attempts int // Result.Attempts, or len(RouteError.Attempts)
		took     time.Duration
	}{
		{
			name:  "a hedge counts toward max_total_attempts",
			route: Route{Targets: targets("a/m1", "b/m2"), Retry: Retry{MaxTotalAttempts: 1}},
			script: map[string][]reply{
				"a/m1": {{delay: 5 * time.Second}},
			},
			want: "a/m1", calls: map[string]int{"a/m1": 1, "b/m2": 0}, attempts: 1, took: 5 * time.Second,
		},
		{
			name:  "no hedge to a target the fallback rules refuse",
			route: Route{Targets: targets("a/m1", "b/m2", "c/m3")},
			script: map[string][]reply{
				"a/m1": {{err: errContextLen}},     // falls back to the larger b/m2 only
				"b/m2": {{delay: 5 * time.Second}}, // slow: would hedge to c/m3 (8000 tokens)
				"c/m3": {{delay: 100 * time.Millisecond}},
			},
			want: "b/m2", calls: map[string]int{"a/m1": 1, "b/m2": 1, "c/m3": 0}, attempts: 2, took: 5 * time.Second,
		},
		{
			name:  "a primary's failure that forbids fallback ends the hedge",
			route: Route{Targets: targets("a/m1", "b/m2")}, // no fallback on content filter
			script: map[string][]reply{
				"a/m1": {{delay: 2 * time.Second, err: errFiltered}},
				"b/m2": {{delay: 3 * time.Second}},
			},
			wantErr: ErrRejected, calls: map[string]int{"a/m1": 1, "b/m2": 1}, attempts: 1, took: 2 * time.Second,
		},
		{
			name:  "a target the hedge tried is not tried again",
			route: Route{Targets: targets("a/m1", "b/m2", "c/m3"), Retry: Retry{MaxAttempts: 2, BaseDelay: 100 * time.Millisecond, MaxDelay: 100 * time.Millisecond}},
			script: map[string][]reply{
				"a/m1": {{delay: 2 * time.Second, err: errOverloaded}, {err: errOverloaded}},
				"b/m2": {{delay: 500 * time.Millisecond, err: errServer}},
			},
			want: "c/m3", calls: map[string]int{"a/m1": 2, "b/m2": 1, "c/m3": 1}, attempts: 4,
		},
	}
	for _, tt := range tests {
		bothWays(t, tt.name, func(t *testing.T, stream bool) {
			route := tt.route
			route.HedgeAfter = time.Second
			h := newHarness(t, map[string]*Route{"default": &route}, func(o *Options) {
				o.Catalog = &catalog.Catalog{Models: windows}
			})
			for target, rs := range tt.script {
				prov, model, _ := catalog.SplitTarget(target)
				h.ads[prov].on(model, rs...)
			}
			start := time.Now()
			var got string
			attempts := 0
			var err error
			if stream {
				var sr *StreamResult
				sr, err = h.eng.Stream(context.Background(), &Call{Request: userReq("x")})
				if err == nil {
					got, attempts = sr.Target, sr.Attempts
					sr.Stream.Close()
				}
			} else {
				var res *Result
				res, err = h.eng.Chat(context.Background(), &Call{Request: userReq("x")})
				if err == nil {
					got, attempts = res.Target, res.Attempts
				}
			}
			took := time.Since(start)
			synctest.Wait()
			if re := (*RouteError)(nil); errors.As(err, &re) {
				attempts = len(re.Attempts)
			}
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Fatalf("target %q err %v; want %q %v", got, err, tt.want, tt.wantErr)
			}
			for target, want := range tt.calls {
				prov, model, _ := catalog.SplitTarget(target)
				if n := h.ads[prov].Calls(model); n != want {
					t.Errorf("%s called %d times, want %d", target, n, want)
				}
			}
			if attempts != tt.attempts {
				t.Errorf("attempts = %d, want %d", attempts, tt.attempts)
			}
			if tt.took != 0 && took != tt.took {
				t.Errorf("took %s, want %s", took, tt.took)
			}
		})
	}
}

// bothWays runs f as the subtest name in a synctest bubble twice: for a
// Chat (stream false), then for a Stream (the subtest name/stream).
func bothWays(t *testing.T, name string, f func(t *testing.T, stream bool)) {
	t.Helper()
	for _, stream := range []bool{false, true} {
		n := name
		if stream {
			n += "/stream"
		}
		t.Run(n, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { f(t, stream) })
		})
	}
}
