package resilience

import (
	"context"
	"errors"
	"fmt"
	"github.com/llmguard/llmguard/catalog"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state/memstore"
)

func TestChatRetryThenFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1", "b/m2"), Retry: Retry{MaxAttempts: 2}},
		}, nil)
		h.ads["a"].on("m1", reply{err: errOverloaded})
		res, err := h.chat("default")
		if err != nil {
			t.Fatal(err)
		}
		if res.Target != "b/m2" || res.Attempts != 3 || res.Fallbacks != 1 || res.Response.Text != "ok from m2" {
			t.Errorf("result = %+v", res)
		}
		want := []string{"attempt a/m1", "failure a/m1", "retry a/m1", "attempt a/m1", "failure a/m1",
			"fallback b/m2", "attempt b/m2", "success b/m2"}
		if diff := cmp.Diff(want, h.kinds()); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if got := h.ads["a"].Calls("m1"); got != 2 {
			t.Errorf("a/m1 calls = %d, want 2", got)
		}
	})
}

func TestNonRetryableMakesOneAttempt(t *testing.T) {
	tests := []struct {
		name       string
		err        *provider.Error
		wantB      bool // whether b/m2 is tried after
		wantSentin error
	}{
		{"invalid_request never falls back", errInvalid, false, ErrRejected},
		{"content_filtered without opt-in", errFiltered, false, ErrRejected},
		{"not_found without fallback", errNotFoundNoF, false, ErrRejected},
		{"auth falls back to another key", errAuth, true, nil},
		{"quota falls back to another key", quota(time.Time{}), true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, map[string]*Route{
					"default": {Targets: targets("a/m1", "b/m2")},
				}, nil)
				h.ads["a"].on("m1", reply{err: tt.err})
				res, err := h.chat("default")
				if got := h.ads["a"].Calls("m1"); got != 1 {
					t.Errorf("a/m1 attempts = %d, want exactly 1", got)
				}
				if got := h.ads["b"].Calls("m2") == 1; got != tt.wantB {
					t.Errorf("b/m2 tried = %v, want %v", got, tt.wantB)
				}
				if tt.wantB {
					if err != nil || res.Target != "b/m2" {
						t.Fatalf("res=%+v err=%v", res, err)
					}
					return
				}
				if !errors.Is(err, tt.wantSentin) {
					t.Fatalf("err = %v, want %v", err, tt.wantSentin)
				}
				if len(h.sleeps()) != 0 {
					t.Errorf("slept %v for a non-retryable error", h.sleeps())
				}
			})
		})
	}
}

func TestWaitNeverBelowHint(t *testing.T) {
	tests := []struct {
		name string
		hint time.Duration
	}{
		{"short hint", 1500 * time.Millisecond},
		{"hint above max_delay", 20 * time.Second},
	}
	for _, tt := range tests {
		for seed := uint64(0); seed < 20; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", tt.name, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					h := newHarness(t, map[string]*Route{
						"default": {Targets: targets("a/m1"), Retry: Retry{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: 10 * time.Second}},
					}, func(o *Options) { o.Rand = rand.New(rand.NewPCG(seed, seed)) })
					h.ads["a"].on("m1", reply{err: rateLimited(tt.hint)}, reply{err: rateLimited(tt.hint)}, reply{})
					res, err := h.chat("default")
					if err != nil {
						t.Fatal(err)
					}
					sleeps := h.sleeps()
					if len(sleeps) != 2 || res.Attempts != 3 {
						t.Fatalf("sleeps %v, attempts %d; want 2 sleeps, 3 attempts", sleeps, res.Attempts)
					}
					for _, d := range sleeps {
						if d < tt.hint {
							t.Errorf("slept %s, below the server's %s", d, tt.hint)
						}
						if d > max(10*time.Second, tt.hint) {
							t.Errorf("slept %s, above max(max_delay, hint)", d)
						}
					}
					var waited time.Duration
					for _, ev := range h.Events() {
						if ev.Kind == EventRetry {
							waited += ev.Wait
							if ev.Verdict == nil || ev.Verdict.Class != classify.RateLimited {
								t.Errorf("retry event without its verdict: %+v", ev)
							}
						}
					}
					if waited != res.Waited {
						t.Errorf("retry events wait %s, Result.Waited %s", waited, res.Waited)
					}
				})
			})
		}
	}
}

func TestWaitThatDoesNotFitMovesOn(t *testing.T) {
	tests := []struct {
		name    string
		route   *Route
		hint    time.Duration
		wantB   bool
		wantErr error
	}{
		{"beyond max_wait, next target", &Route{Targets: targets("a/m1", "b/m2"), Retry: Retry{MaxWait: 30 * time.Second}}, 45 * time.Second, true, nil},
		{"beyond deadline, next target", &Route{Targets: targets("a/m1", "b/m2"), Timeout: 10 * time.Second}, 20 * time.Second, true, nil},
		{"beyond max_wait, none left", &Route{Targets: targets("a/m1"), Retry: Retry{MaxWait: 30 * time.Second}}, 45 * time.Second, false, ErrExhausted},
		{"beyond deadline, none left", &Route{Targets: targets("a/m1"), Timeout: 10 * time.Second}, 20 * time.Second, false, ErrExhausted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, map[string]*Route{"default": tt.route}, nil)
				h.ads["a"].on("m1", reply{err: rateLimited(tt.hint)})
				start := time.Now()
				res, err := h.chat("default")
				if len(h.sleeps()) != 0 {
					t.Errorf("slept %v although the wait does not fit", h.sleeps())
				}
				if h.ads["a"].Calls("m1") != 1 {
					t.Errorf("a/m1 attempts = %d, want 1", h.ads["a"].Calls("m1"))
				}
				if tt.wantB {
					if err != nil || res.Target != "b/m2" {
						t.Fatalf("res=%+v err=%v", res, err)
					}
					return
				}
				var re *RouteError
				if !errors.As(err, &re) || !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v", err)
				}
				if want := start.Add(tt.hint); !re.RetryAt.Equal(want) {
					t.Errorf("RetryAt = %v, want %v (when the server said to come back)", re.RetryAt, want)
				}
				if !re.AllRateLimited() {
					t.Error("AllRateLimited() = false")
				}
			})
		})
	}
}

func TestDeadlineNeverExceeded(t *testing.T) {
	for seed := uint64(0); seed < 30; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, map[string]*Route{
					"default": {Targets: targets("a/m1", "b/m2", "c/m3"), Timeout: 20 * time.Second,
						Retry: Retry{MaxAttempts: 10, MaxTotalAttempts: 100, BaseDelay: time.Second, MaxDelay: 8 * time.Second}},
				}, func(o *Options) { o.Rand = rand.New(rand.NewPCG(seed, 3)) })
				// Every attempt takes 1.5s of (fake) time and fails retryably.
				for _, n := range []string{"a", "b", "c"} {
					h.ads[n].on("m"+map[string]string{"a": "1", "b": "2", "c": "3"}[n],
						reply{err: errServer, delay: 1500 * time.Millisecond})
				}
				start := time.Now()
				_, err := h.chat("default")
				if err == nil {
					t.Fatal("want an error")
				}
				var waited time.Duration
				for _, d := range h.sleeps() {
					waited += d
				}
				// Sleeps never run past the deadline: each was scheduled only
				// when it fit the time left.
				elapsedBeforeLast := time.Since(start) - 1500*time.Millisecond
				if elapsedBeforeLast > 20*time.Second {
					t.Errorf("last attempt started at +%s, after the 20s deadline (waited %s)", elapsedBeforeLast, waited)
				}
			})
		})
	}
}

func TestKeyScopeSkipsSiblings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reset := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1", "a/m2", "b/m3")},
		}, nil)
		h.ads["a"].on("m1", reply{err: quota(reset)}, reply{})
		res, err := h.chat("default")
		if err != nil || res.Target != "b/m3" {
			t.Fatalf("res=%+v err=%v", res, err)
		}
		if n := h.ads["a"].Calls("m2"); n != 0 {
			t.Errorf("a/m2 (same key) was called %d times after a key-scope failure", n)
		}
		var skipped bool
		for _, ev := range h.Events() {
			if ev.Kind == EventSkip && ev.Target == "a/m2" {
				skipped = true
			}
		}
		if !skipped {
			t.Error("no skip event for a/m2")
		}
		// Until the quota resets, every a/* target is skipped at zero cost.
		time.Sleep(time.Hour)
		if _, err := h.chat("default"); err != nil {
			t.Fatal(err)
		}
		if h.ads["a"].Calls("m1") != 1 || h.ads["a"].Calls("m2") != 0 {
			t.Errorf("key still open: a/m1 %d calls, a/m2 %d", h.ads["a"].Calls("m1"), h.ads["a"].Calls("m2"))
		}
		st := statusOf(h.eng, "a/m2")
		if st.Breaker != "open" || !st.OpenUntil.Equal(reset) {
			t.Errorf("status of a/m2 = %+v, want open until %v", st, reset)
		}
		// After the reset: a half-open probe goes through and closes the key.
		time.Sleep(time.Until(reset))
		res, err = h.chat("default")
		if err != nil || res.Target != "a/m1" {
			t.Fatalf("after reset: res=%+v err=%v", res, err)
		}
		if st := statusOf(h.eng, "a/m1"); st.Breaker != "closed" {
			t.Errorf("after a successful probe: %+v", st)
		}
	})
}

func statusOf(e *Engine, target string) TargetStatus {
	for _, s := range e.Status() {
		if s.Target == target {
			return s
		}
	}
	return TargetStatus{}
}

// openAfter is a breaker that opens once n calls in the window all failed
// (failure_ratio 1 has no margin for chance), for cooldown.
func openAfter(n int, cooldown time.Duration) Breaker {
	return Breaker{FailureRatio: new(1.0), MinCalls: n, Failures: new(n), InitialCooldown: cooldown, Cooldown: cooldown}
}

func TestModelBreakerOpensAndSkipsAtZeroCost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1", "b/m2"), Retry: Retry{MaxAttempts: 1},
				Breaker: openAfter(2, 30*time.Second)},
		}, nil)
		h.ads["a"].on("m1", reply{err: errOverloaded}, reply{err: errOverloaded}, reply{})
		for range 2 {
			if _, err := h.chat("default"); err != nil {
				t.Fatal(err)
			}
		}
		if st := statusOf(h.eng, "a/m1"); st.Breaker != "open" || st.Failures != 2 {
			t.Fatalf("after 2 failures: %+v", st)
		}
		res, err := h.chat("default")
		if err != nil || res.Target != "b/m2" || res.Attempts != 1 {
			t.Fatalf("open target not skipped at zero cost: res=%+v err=%v", res, err)
		}
		if h.ads["a"].Calls("m1") != 2 {
			t.Errorf("a/m1 called %d times, want 2", h.ads["a"].Calls("m1"))
		}
		// A sibling on the same key is unaffected by a model-scope failure.
		if st := statusOf(h.eng, "b/m2"); st.Breaker != "closed" {
			t.Errorf("b/m2 = %+v", st)
		}
		time.Sleep(30 * time.Second)
		res, err = h.chat("default")
		if err != nil || res.Target != "a/m1" {
			t.Fatalf("after cooldown: res=%+v err=%v", res, err)
		}
		var transitions []string
		for _, ev := range h.Events() {
			if ev.Kind == EventBreaker {
				transitions = append(transitions, ev.From+"->"+ev.To)
			}
		}
		if diff := cmp.Diff([]string{"closed->open", "open->half_open", "half_open->closed"}, transitions); diff != "" {
			t.Errorf("breaker events (-want +got):\n%s", diff)
		}
	})
}

// TestTransportFailuresCountOnTheTarget: transport failures (scope
// provider: resets, EOFs) count in the target's window, never on the key:
// isolated blips among successes open nothing, and a target whose calls all
// fail is opened alone while its key's other targets keep serving.
func TestTransportFailuresCountOnTheTarget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1", "a/m2", "b/m3"), Breaker: openAfter(3, 30*time.Second)},
		}, nil)
		netErr := perr(classify.Network, 0, classify.ScopeProvider, true, true, 0)
		// Every other call meets one blip, then its retry succeeds.
		var rs []reply
		for range 10 {
			rs = append(rs, reply{err: netErr}, reply{}, reply{})
		}
		h.ads["a"].on("m1", rs...)
		for i := range 20 {
			res, err := h.chat("default")
			if err != nil {
				t.Fatal(err)
			}
			if res.Target != "a/m1" {
				t.Fatalf("call %d answered by %s: %+v", i, res.Target, statusOf(h.eng, "a/m1"))
			}
		}
		for _, ev := range h.Events() {
			if ev.Kind == EventBreaker {
				t.Errorf("breaker event %+v", ev)
			}
		}
		// Later a/m1 fails every call: its own breaker opens; a/m2, on the
		// same key, still answers.
		time.Sleep(time.Minute)
		h.ads["a"].mu.Lock()
		h.ads["a"].script["m1"], h.ads["a"].calls["m1"] = []reply{{err: netErr}}, 0
		h.ads["a"].mu.Unlock()
		for range 2 {
			if res, err := h.chat("default"); err != nil || res.Target != "a/m2" {
				t.Fatalf("res=%+v err=%v", res, err)
			}
		}
		if st := statusOf(h.eng, "a/m1"); st.Breaker != "open" {
			t.Fatalf("a/m1 after its calls all failed: %+v", st)
		}
		before := h.ads["a"].Calls("m1")
		if res, err := h.chat("default"); err != nil || res.Target != "a/m2" || res.Attempts != 1 || h.ads["a"].Calls("m1") != before {
			t.Fatalf("open target not skipped, or its key shut: res=%+v err=%v", res, err)
		}
		if b, _ := h.eng.store.Breaker(context.Background(), keyKey("a")); breakerState(&b) != "closed" || b.WindowCalls != 0 {
			t.Errorf("transport failures reached the key's breaker: %+v", b)
		}
	})
}

// TestFallbackEventNamesTheFailure: a fallback event names the target
// fallen back from (From) and to (Target), with the failure's verdict.
func TestFallbackEventNamesTheFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1", "b/m2", "c/m3"), Retry: Retry{MaxAttempts: 1}},
		}, nil)
		h.ads["a"].on("m1", reply{err: errOverloaded})
		h.ads["b"].on("m2", reply{err: errServer})
		if res, err := h.chat("default"); err != nil || res.Target != "c/m3" {
			t.Fatalf("res=%+v err=%v", res, err)
		}
		type fb struct {
			From, Target string
			Verdict      *classify.Verdict
		}
		var got []fb
		for _, ev := range h.Events() {
			if ev.Kind == EventFallback {
				got = append(got, fb{ev.From, ev.Target, ev.Verdict})
			}
		}
		want := []fb{{"a/m1", "b/m2", &errOverloaded.Verdict}, {"b/m2", "c/m3", &errServer.Verdict}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("fallback events (-want +got):\n%s", diff)
		}
	})
}

// TestRateLimitIsCooldownNotIllHealth: a 429 holds back the call that got
// it (it moves on or waits the hint) but does not shut the target for the
// other callers; only when most of the target's recent calls are rate
// limited is it skipped until the hint ends (one paced call per second
// excepted), and a rate limit never opens the breaker.
func TestRateLimitIsCooldownNotIllHealth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1", "b/m2"), Retry: Retry{MaxAttempts: 1},
				Breaker: Breaker{FailureRatio: new(1.0), MinCalls: 3}},
		}, nil)
		h.ads["a"].on("m1", reply{err: rateLimited(5 * time.Second)}, reply{}, reply{}, reply{},
			reply{err: rateLimited(5 * time.Second)}, reply{err: rateLimited(5 * time.Second)}, reply{err: rateLimited(5 * time.Second)}, reply{})
		if res, err := h.chat("default"); err != nil || res.Target != "b/m2" {
			t.Fatalf("res=%+v err=%v", res, err)
		}
		// One 429 among successes: the next callers still get a/m1.
		for i := range 3 {
			if res, err := h.chat("default"); err != nil || res.Target != "a/m1" {
				t.Fatalf("call %d after one 429: res=%+v err=%v", i, res, err)
			}
		}
		// Three in a row make 4 of 7 calls rate limited: a cooldown for all.
		for range 3 {
			if res, err := h.chat("default"); err != nil || res.Target != "b/m2" {
				t.Fatalf("res=%+v err=%v", res, err)
			}
		}
		if st := statusOf(h.eng, "a/m1"); st.Breaker != "closed" {
			t.Errorf("rate limits opened the breaker: %+v", st)
		}
		calls := h.ads["a"].Calls("m1")
		time.Sleep(500 * time.Millisecond)
		if res, err := h.chat("default"); err != nil || res.Target != "b/m2" || h.ads["a"].Calls("m1") != calls {
			t.Fatalf("during cooldown: res=%+v err=%v, a/m1 called %d more times", res, err, h.ads["a"].Calls("m1")-calls)
		}
		// A second on, one paced call goes through; it succeeds and ends the
		// cooldown.
		time.Sleep(time.Second)
		for i := range 2 {
			if res, err := h.chat("default"); err != nil || res.Target != "a/m1" {
				t.Fatalf("call %d after the paced call: res=%+v err=%v", i, res, err)
			}
		}
	})
}

func TestRequestScopeCountsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1"), Breaker: openAfter(1, time.Minute)},
		}, nil)
		h.ads["a"].on("m1", reply{err: errInvalid}, reply{err: errInvalid}, reply{})
		for range 2 {
			if _, err := h.chat("default"); !errors.Is(err, ErrRejected) {
				t.Fatalf("err = %v", err)
			}
		}
		if res, err := h.chat("default"); err != nil || res.Target != "a/m1" {
			t.Fatalf("request-scope failures opened the breaker: res=%+v err=%v", res, err)
		}
	})
}

func TestContextLengthFallsBackOnlyToLargerWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := map[string]*Route{
			"default": {Targets: targets("a/small", "b/same", "c/large")},
		}
		h := newHarness(t, cfg, func(o *Options) {
			o.Catalog = &catalog.Catalog{Models: map[string]catalog.Model{
				"a/small": {ContextWindow: 8000}, "b/same": {ContextWindow: 8000}, "c/large": {ContextWindow: 200000},
			}}
		})
		h.ads["a"].on("small", reply{err: errContextLen})
		res, err := h.chat("default")
		if err != nil || res.Target != "c/large" {
			t.Fatalf("res=%+v err=%v", res, err)
		}
		if h.ads["b"].Calls("same") != 0 {
			t.Error("fell back to a target with the same context window")
		}
	})
}

func TestContentFilteredOptIn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1", "b/m2"), FallbackOnContentFilter: true},
		}, nil)
		h.ads["a"].on("m1", reply{err: errFiltered})
		if res, err := h.chat("default"); err != nil || res.Target != "b/m2" {
			t.Fatalf("res=%+v err=%v", res, err)
		}
	})
}

func TestRetryBudget(t *testing.T) {
	tests := []struct {
		name         string
		retry        Retry
		wantAttempts int
		wantSkip     string
	}{
		{"lone caller gets its retries from the floor", Retry{MaxAttempts: 3, Budget: new(0.2), MinRetryConcurrency: new(3)}, 3, ""},
		{"no floor, 20% of one call is no retry", Retry{MaxAttempts: 3, Budget: new(0.2), MinRetryConcurrency: new(-1)}, 1, "retry budget exhausted"},
		{"max_total_attempts caps the route", Retry{MaxAttempts: 3, MaxTotalAttempts: 2}, 2, "max_total_attempts reached"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, map[string]*Route{
					"default": {Targets: targets("a/m1"), Retry: tt.retry, Breaker: Breaker{Failures: new(100)}},
				}, nil)
				h.ads["a"].on("m1", reply{err: errServer})
				_, err := h.chat("default")
				var re *RouteError
				if !errors.As(err, &re) {
					t.Fatalf("err = %v", err)
				}
				if len(re.Attempts) != tt.wantAttempts || h.ads["a"].Calls("m1") != tt.wantAttempts {
					t.Errorf("attempts = %d (adapter saw %d), want %d", len(re.Attempts), h.ads["a"].Calls("m1"), tt.wantAttempts)
				}
				if tt.wantSkip != "" && !strings.Contains(err.Error(), tt.wantSkip) {
					t.Errorf("error %q does not say %q", err, tt.wantSkip)
				}
			})
		})
	}
}

func TestBudgetUnderConcurrency(t *testing.T) {
	// 10 calls in flight on one target, budget 20%, no floor: a retry
	// may start while fewer than 2 retry attempts run.
	rt := &targetRuntime{}
	tp := &targetPlan{rt: rt, retry: retryPolicy{budget: 0.2}}
	rt.active.Store(10)
	for running, want := range []bool{true, true, false} {
		rt.retrying.Store(int64(running))
		if got := retryRoom(tp); got != want {
			t.Errorf("with %d retries running: room %v, want %v", running, got, want)
		}
	}
	tp.retry.minConcurrency = 3
	rt.retrying.Store(2)
	if !retryRoom(tp) {
		t.Error("floor of 3 not honoured")
	}
	rt.retrying.Store(3)
	if retryRoom(tp) {
		t.Error("a 4th concurrent retry passed a floor of 3")
	}
}

func TestStaticFallbackIsLabelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1"), Retry: Retry{MaxAttempts: 1},
				StaticFallback: map[string]string{"help": "Available commands: /help", "*": "Service busy"}},
		}, nil)
		h.ads["a"].on("m1", reply{err: errOverloaded})
		for _, tc := range []struct{ prompt, want string }{{"  HELP ", "Available commands: /help"}, {"what?", "Service busy"}} {
			res, err := h.eng.Chat(context.Background(), &Call{Request: userReq(tc.prompt)})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Static || res.Target != "static" || res.Response.Text != tc.want || res.Response.Model != "static" {
				t.Errorf("%q: static result not labelled: %+v %+v", tc.prompt, res, res.Response)
			}
		}
		sr, err := h.eng.Stream(context.Background(), &Call{Request: userReq("help")})
		if err != nil || sr.Target != "static" || !sr.Static {
			t.Fatalf("stream static: %+v %v", sr, err)
		}
		c, _ := sr.Stream.Recv()
		if c.Text != "Available commands: /help" {
			t.Errorf("static stream chunk %+v", c)
		}
	})
}

func TestRouteErrorLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1", "b/m2", "c/m3"), Retry: Retry{MaxAttempts: 2, MaxWait: 10 * time.Second},
				Breaker: Breaker{Failures: new(100)}},
		}, nil)
		h.ads["a"].on("m1", reply{err: errOverloaded})
		h.ads["b"].on("m2", reply{err: rateLimited(20 * time.Second)})
		h.ads["c"].on("m3", reply{err: errServer})
		_, err := h.chat("default")
		want := "route default: every target failed: a/m1 overloaded 529 ×2; b/m2 rate_limited 429 (wait 20s); c/m3 server_error 500 ×2; " +
			"b/m2 skipped (server asked to wait 20s, more than max_wait 10s); last request id req_server_error_500"
		if err == nil || err.Error() != want {
			t.Errorf("Error() =\n%v\nwant\n%s", err, want)
		}
		var re *RouteError
		errors.As(err, &re)
		if re.Last() == nil || re.Last().Verdict.Class != classify.ServerError || re.AllRateLimited() {
			t.Errorf("Last/AllRateLimited wrong: %+v", re)
		}
		var pe *provider.Error
		if !errors.As(err, &pe) || !errors.Is(err, ErrExhausted) {
			t.Error("RouteError does not unwrap to its sentinel and *provider.Error")
		}
		if strings.Contains(err.Error(), "\n") {
			t.Error("multi-line error")
		}
	})
}

func TestUnknownRouteAndBareModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1")}}, func(o *Options) { o.Catalog = &catalog.Catalog{DefaultProvider: "b"} })
		if _, err := h.chat("nope/"); !errors.Is(err, ErrUnknownRoute) {
			t.Errorf("bad target: err = %v", err)
		}
		res, err := h.chat("c/direct")
		if err != nil || res.Target != "c/direct" {
			t.Errorf("provider/model route: %+v %v", res, err)
		}
		res, err = h.chat("bare-model")
		if err != nil || res.Target != "b/bare-model" {
			t.Errorf("bare model to default provider: %+v %v", res, err)
		}
		res, err = h.eng.Chat(context.Background(), &Call{Request: userReq("x"), Fallbacks: []string{"c/fb"}})
		if err != nil || res.Target != "a/m1" {
			t.Errorf("with call fallbacks: %+v %v", res, err)
		}
		if got := h.eng.Routes(); !cmp.Equal(got, map[string][]string{"default": {"a/m1"}}) {
			t.Errorf("Routes() = %v", got)
		}
	})
}

func TestCostOrderAndCost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"cheap": {Targets: targets("a/pricey", "b/cheap", "c/unknown"), ByCost: true},
		}, func(o *Options) {
			o.Catalog = &catalog.Catalog{Prices: map[string]catalog.Price{"a/pricey": {In: 10, Out: 30}, "b/cheap": {In: 0.1, Out: 0.4}}}
		})
		if got := h.eng.Routes()["cheap"]; !cmp.Equal(got, []string{"b/cheap", "a/pricey", "c/unknown"}) {
			t.Errorf("cost order = %v", got)
		}
		res, err := h.chat("cheap")
		if err != nil {
			t.Fatal(err)
		}
		// 1000 in × $0.1/M + 500 out × $0.4/M
		if want := 0.0003; res.Cost < want-1e-12 || res.Cost > want+1e-12 {
			t.Errorf("cost = %v, want %v", res.Cost, want)
		}
	})
}

// TestCostOrderKeepsCallFallbacksLast: order: cost sorts the route's own
// targets; a call's Fallbacks (and a target the call names) follow them in
// the order given.
func TestCostOrderKeepsCallFallbacksLast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/pricey", "b/cheap"), ByCost: true},
		}, func(o *Options) {
			o.Catalog = &catalog.Catalog{Prices: map[string]catalog.Price{
				"a/pricey": {In: 10, Out: 30}, "b/cheap": {In: 0.1, Out: 0.4},
				"c/cheapest": {In: 0.01, Out: 0.01}, "c/dear": {In: 50, Out: 50},
			}}
		})
		for _, tc := range []struct {
			route     string
			fallbacks []string
			want      []string
		}{
			{"default", []string{"c/dear", "c/cheapest"}, []string{"b/cheap", "a/pricey", "c/dear", "c/cheapest"}},
			{"c/dear", []string{"c/cheapest"}, []string{"c/dear", "c/cheapest"}},
		} {
			rp, err := h.eng.plan(&Call{Route: tc.route, Fallbacks: tc.fallbacks, Request: userReq("x")})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, rp.targetNames); diff != "" {
				t.Errorf("route %s + fallbacks %v (-want +got):\n%s", tc.route, tc.fallbacks, diff)
			}
		}
		res, err := h.eng.Chat(context.Background(), &Call{Route: "c/dear", Fallbacks: []string{"c/cheapest"}, Request: userReq("x")})
		if err != nil || res.Target != "c/dear" {
			t.Errorf("the named target did not answer: res=%+v err=%v", res, err)
		}
	})
}

func TestPerTargetOverridesAndStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {
				Targets: []Target{
					{Name: "a/m1", Retry: &Retry{MaxAttempts: 1}, Breaker: &Breaker{FailureRatio: new(1.0), MinCalls: 1, Failures: new(1)}},
					{Name: "b/m2"},
				},
				Retry:   Retry{MaxAttempts: 4},
				Breaker: Breaker{MinCalls: 5},
			},
		}, nil)
		h.ads["a"].on("m1", reply{err: errServer})
		h.ads["b"].on("m2", reply{err: errServer}, reply{})
		res, err := h.chat("default")
		if err != nil {
			t.Fatal(err)
		}
		if h.ads["a"].Calls("m1") != 1 || h.ads["b"].Calls("m2") != 2 || res.Attempts != 3 {
			t.Errorf("calls a=%d b=%d attempts=%d; want 1, 2, 3", h.ads["a"].Calls("m1"), h.ads["b"].Calls("m2"), res.Attempts)
		}
		got := h.eng.Status()
		for i := range got {
			got[i].LastFailed = time.Time{}
			got[i].OpenUntil = time.Time{}
		}
		want := []TargetStatus{
			{Target: "a/m1", Breaker: "open", Failures: 1, LastError: "500 server_error"},
			{Target: "b/m2", Breaker: "closed", Successes: 1, Failures: 1, Retries: 1, Fallbacks: 1, LastError: "500 server_error"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Status (-want +got):\n%s", diff)
		}
	})
}

func TestCallerDeadlineShortensTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1", "b/m2"), Timeout: time.Minute},
		}, nil)
		// A 10s wait fits the route's minute but not the caller's 5s: move on.
		h.ads["a"].on("m1", reply{err: rateLimited(10 * time.Second)})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := h.eng.Chat(ctx, &Call{Request: userReq("x")})
		if err != nil || res.Target != "b/m2" || len(h.sleeps()) != 0 {
			t.Fatalf("res=%+v err=%v sleeps=%v", res, err, h.sleeps())
		}
	})
}

// TestServerWaitShared: two engines on one store (two replicas). A 429 with
// a 5s wait that A's call got keeps B's calls on the route's other target
// until the wait ends; A's own next call still tries the target (a lone
// 429 is its call's, as TestRateLimitIsCooldownNotIllHealth has it).
func TestServerWaitShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memstore.New()
		routes := map[string]*Route{"default": {Targets: targets("a/m1", "b/m2"), Retry: Retry{MaxAttempts: 1}}}
		share := func(o *Options) { o.Store = store }
		ha, hb := newHarness(t, routes, share), newHarness(t, routes, share)
		ha.ads["a"].on("m1", reply{err: rateLimited(5 * time.Second)}, reply{})
		if res, err := ha.chat("default"); err != nil || res.Target != "b/m2" {
			t.Fatalf("A: res=%+v err=%v", res, err)
		}
		for i := range 3 {
			if res, err := hb.chat("default"); err != nil || res.Target != "b/m2" || hb.ads["a"].Calls("m1") != 0 {
				t.Fatalf("B's call %d within the wait: res=%+v err=%v, a/m1 called %d times", i, res, err, hb.ads["a"].Calls("m1"))
			}
		}
		if res, err := ha.chat("default"); err != nil || res.Target != "a/m1" {
			t.Errorf("A's next call: res=%+v err=%v", res, err)
		}
		time.Sleep(5 * time.Second)
		if res, err := hb.chat("default"); err != nil || res.Target != "a/m1" {
			t.Errorf("B's call after the wait: res=%+v err=%v", res, err)
		}
	})
}
