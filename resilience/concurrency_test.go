package resilience

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
)

// TestHalfOpenAdmitsOnlyProbes: a half-open breaker lets its probes
// through and holds the other callers (their route has no other target and
// time to wait) until a probe's success closes it; then they are answered.
func TestHalfOpenAdmitsOnlyProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1"), Retry: Retry{MaxAttempts: 1},
				Breaker: Breaker{FailureRatio: new(1.0), MinCalls: 1, Failures: new(1), InitialCooldown: 10 * time.Second, Probes: 2}},
		}, nil)
		gate := make(chan struct{})
		h.ads["a"].on("m1", reply{err: errOverloaded}, reply{block: gate})
		if _, err := h.chat("default"); err == nil {
			t.Fatal("first call should fail")
		}
		time.Sleep(10 * time.Second)
		const callers = 6
		var wg sync.WaitGroup
		var mu sync.Mutex
		var okN, refused int
		for range callers {
			wg.Go(func() {
				_, err := h.chat("default")
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					okN++
				case errors.Is(err, ErrNoTarget):
					refused++
				default:
					t.Errorf("unexpected error %v", err)
				}
			})
		}
		synctest.Wait() // every caller is blocked upstream or waiting for a recheck
		if got := h.ads["a"].Calls("m1") - 1; got != 2 {
			t.Errorf("half-open let %d calls through, want 2 probes", got)
		}
		close(gate)
		wg.Wait()
		if okN != callers || refused != 0 {
			t.Errorf("ok %d, refused %d; want every caller answered once a probe succeeded", okN, refused)
		}
		if got := h.ads["a"].Calls("m1") - 1; got != callers {
			t.Errorf("%d upstream calls for %d callers", got, callers)
		}
		if st := statusOf(h.eng, "a/m1"); st.Breaker != "closed" {
			t.Errorf("after successful probes: %+v", st)
		}
	})
}

func TestSingleFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1")}}, nil)
		gate := make(chan struct{})
		h.ads["a"].on("m1", reply{block: gate, text: "once"})
		const n = 8
		results := make(chan *Result, n)
		for range n {
			go func() {
				res, err := h.eng.Chat(context.Background(), &Call{Request: userReq("hi"), IdempotencyKey: "k1"})
				if err != nil {
					t.Error(err)
				}
				results <- res
			}()
		}
		synctest.Wait()
		close(gate)
		cached := 0
		for range n {
			r := <-results
			if r == nil {
				continue
			}
			if r.Response.Text != "once" {
				t.Errorf("text %q", r.Response.Text)
			}
			if r.Cached {
				cached++
			}
		}
		if got := h.ads["a"].Calls("m1"); got != 1 {
			t.Errorf("%d concurrent duplicates made %d upstream calls, want 1", n, got)
		}
		if cached != n-1 {
			t.Errorf("%d results marked Cached, want %d", cached, n-1)
		}
		// A later duplicate is served from the store until the TTL.
		res, err := h.eng.Chat(context.Background(), &Call{Request: userReq("hi"), IdempotencyKey: "k1"})
		if err != nil || !res.Cached || h.ads["a"].Calls("m1") != 1 {
			t.Errorf("later duplicate: %+v %v calls=%d", res, err, h.ads["a"].Calls("m1"))
		}
		cachedEvents := 0
		for _, ev := range h.Events() {
			if ev.Kind == EventSuccess && ev.Reason == "cached" {
				cachedEvents++
			}
		}
		if cachedEvents != n {
			t.Errorf("%d cached success events, want %d", cachedEvents, n)
		}
		time.Sleep(idempotencyTTL)
		res, err = h.eng.Chat(context.Background(), &Call{Request: userReq("hi"), IdempotencyKey: "k1"})
		if err != nil || res.Cached || h.ads["a"].Calls("m1") != 2 {
			t.Errorf("after TTL: %+v %v calls=%d", res, err, h.ads["a"].Calls("m1"))
		}
	})
}

func TestRouteCacheKeysOnRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1"), Cache: Cache{TTL: time.Minute}}}, nil)
		h.ads["a"].on("m1", reply{err: errServer}, reply{})
		call := func(text string) *Result {
			res, err := h.eng.Chat(context.Background(), &Call{Request: userReq(text)})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		if r := call("one"); r.Cached {
			t.Error("first call cached")
		}
		if r := call("one"); !r.Cached {
			t.Error("identical request not served from cache")
		}
		if r := call("two"); r.Cached {
			t.Error("different request served from cache")
		}
		// 1 failure + 1 success for "one", 1 for "two": failures are never stored.
		if got := h.ads["a"].Calls("m1"); got != 3 {
			t.Errorf("upstream calls = %d, want 3", got)
		}
	})
}

// TestHedging: a slow primary is hedged at hedge_after and the first
// answer wins; the engine says when the hedge won (EventHedgeWon, from the
// primary to the hedge's target), and only then.
func TestHedging(t *testing.T) {
	tests := []struct {
		name       string
		primary    reply
		hedge      reply // b/m2's (zero: at once)
		wantTarget string
		wantErr    error
		wantBCalls int
		wantTook   time.Duration
	}{
		{"slow primary loses to hedge", reply{delay: 5 * time.Second}, reply{}, "b/m2", nil, 1, time.Second},
		{"primary answers before the hedge", reply{delay: 1500 * time.Millisecond}, reply{delay: 5 * time.Second}, "a/m1", nil, 1, 1500 * time.Millisecond},
		{"fast primary, no hedge", reply{delay: 500 * time.Millisecond}, reply{}, "a/m1", nil, 0, 500 * time.Millisecond},
		{"deterministic error is never hedged", reply{delay: 500 * time.Millisecond, err: errInvalid}, reply{}, "", ErrRejected, 0, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		bothWays(t, tt.name, func(t *testing.T, stream bool) {
			h := newHarness(t, map[string]*Route{
				"default": {Targets: targets("a/m1", "b/m2"), HedgeAfter: time.Second},
			}, nil)
			h.ads["a"].on("m1", tt.primary)
			h.ads["b"].on("m2", tt.hedge)
			start := time.Now()
			var target string
			var err error
			if stream {
				var sr *StreamResult
				sr, err = h.eng.Stream(context.Background(), &Call{Request: userReq("x")})
				if err == nil {
					target = sr.Target
					text := Streamed(t, sr.Stream)
					if !strings.HasSuffix(text, strings.Split(target, "/")[1]) {
						t.Errorf("stream text %q from %s", text, target)
					}
				}
			} else {
				var res *Result
				res, err = h.eng.Chat(context.Background(), &Call{Request: userReq("x")})
				if err == nil {
					target = res.Target
				}
			}
			took := time.Since(start)
			if !errors.Is(err, tt.wantErr) || target != tt.wantTarget {
				t.Fatalf("target %q err %v; want %q %v", target, err, tt.wantTarget, tt.wantErr)
			}
			if got := h.ads["b"].Calls("m2"); got != tt.wantBCalls {
				t.Errorf("hedge target called %d times, want %d", got, tt.wantBCalls)
			}
			if took != tt.wantTook {
				t.Errorf("took %s, want %s", took, tt.wantTook)
			}
			synctest.Wait()
			hedged := tt.wantTarget == "b/m2"
			if hedged && h.ads["a"].CtxEnded("m1") != 1 {
				t.Error("losing primary was not cancelled")
			}
			var won []string
			for _, ev := range h.Events() {
				if ev.Kind == EventHedgeWon {
					won = append(won, ev.From+" -> "+ev.Target)
				}
			}
			if want := map[bool]int{true: 1}[hedged]; len(won) != want || (hedged && won[0] != "a/m1 -> b/m2") {
				t.Errorf("hedge_won events %q, want %d from a/m1 to b/m2", won, want)
			}
		})
	}
}

func TestSilentUpstreamFailsOverAfterFirstTimeout(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		a      reply
		route  Route
		want   time.Duration
	}{
		{"chat: no response within header timeout", false, reply{hang: true},
			Route{Stream: Timeouts{HeaderTimeout: 5 * time.Second}}, 5 * time.Second},
		{"stream: no headers", true, reply{hang: true},
			Route{Stream: Timeouts{HeaderTimeout: 3 * time.Second}}, 3 * time.Second},
		{"stream: no first token", true, reply{stallAfter: -1},
			Route{Stream: Timeouts{FirstTokenTimeout: 2 * time.Second}}, 2 * time.Second},
		{"stream: deadline shorter than first-token timeout", true, reply{stallAfter: -1},
			Route{Timeout: time.Second, Stream: Timeouts{FirstTokenTimeout: 15 * time.Second}}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := tt.route
				r.Targets = targets("a/m1", "b/m2")
				h := newHarness(t, map[string]*Route{"default": &r}, nil)
				h.ads["a"].on("m1", tt.a)
				start := time.Now()
				var target string
				var err error
				if tt.stream {
					var sr *StreamResult
					if sr, err = h.eng.Stream(context.Background(), &Call{Request: userReq("x")}); err == nil {
						target = sr.Target
						if got := Streamed(t, sr.Stream); got != "ok from m2" {
							t.Errorf("stream text %q", got)
						}
					}
				} else {
					var res *Result
					if res, err = h.eng.Chat(context.Background(), &Call{Request: userReq("x")}); err == nil {
						target = res.Target
					}
				}
				if r.Timeout > 0 && r.Timeout < tt.want+time.Second {
					// The deadline ran out on the first target: nothing left.
					if !errors.Is(err, ErrDeadline) {
						t.Fatalf("err = %v, want ErrDeadline", err)
					}
				} else if err != nil || target != "b/m2" {
					t.Fatalf("target %q err %v", target, err)
				}
				if took := time.Since(start); took != tt.want {
					t.Errorf("took %s, want %s", took, tt.want)
				}
				if got := h.ads["a"].Calls("m1"); got != 1 {
					t.Errorf("silent upstream attempted %d times, want 1", got)
				}
				var sawTimeout bool
				for _, ev := range h.Events() {
					if ev.Kind == EventFailure && ev.Verdict.Class == classify.Timeout {
						sawTimeout = true
					}
				}
				if !sawTimeout {
					t.Error("no timeout failure event")
				}
			})
		})
	}
}

func TestStreamIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1"), Stream: Timeouts{IdleTimeout: 4 * time.Second}},
		}, nil)
		h.ads["a"].on("m1", reply{chunks: []string{"one", "two", "three"}, stallAfter: 2})
		sr, err := h.eng.Stream(context.Background(), &Call{Request: userReq("x")})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"one", "two"} {
			c, err := sr.Stream.Recv()
			if err != nil || c.Text != want {
				t.Fatalf("Recv = %q, %v; want %q", c.Text, err, want)
			}
		}
		start := time.Now()
		_, err = sr.Stream.Recv()
		pe := provider.AsError(err)
		if pe == nil || pe.Verdict.Class != classify.Timeout || !pe.AfterFirstToken {
			t.Fatalf("stalled stream: err = %v (%+v)", err, pe)
		}
		if took := time.Since(start); took != 4*time.Second {
			t.Errorf("stall detected after %s, want 4s", took)
		}
		if st := statusOf(h.eng, "a/m1"); st.Failures != 1 || st.Successes != 1 {
			t.Errorf("mid-stream stall not counted: %+v", st)
		}
		sr.Stream.Close()
		sr.Stream.Close()
	})
}

func TestStreamMidErrorIsAfterFirstToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1", "b/m2")}}, nil)
		h.ads["a"].on("m1", reply{chunks: []string{"partial"}, midErr: errOverloaded})
		sr, err := h.eng.Stream(context.Background(), &Call{Request: userReq("x")})
		if err != nil || sr.Target != "a/m1" {
			t.Fatalf("%+v %v", sr, err)
		}
		c, _ := sr.Stream.Recv()
		if c.Text != "partial" {
			t.Errorf("first chunk %q", c.Text)
		}
		_, err = sr.Stream.Recv()
		if pe := provider.AsError(err); pe == nil || !pe.AfterFirstToken || pe.Verdict.Class != classify.Overloaded {
			t.Errorf("mid-stream error = %v", err)
		}
		if errOverloaded.AfterFirstToken {
			t.Error("the adapter's error value was mutated")
		}
		sr.Stream.Close()
	})
}

func TestConcurrencyLimitQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1", "b/m2"), MaxConcurrency: 1, QueueTimeout: 2 * time.Second},
		}, nil)
		gate := make(chan struct{})
		h.ads["a"].on("m1", reply{block: gate})
		done := make(chan *Result, 1)
		go func() {
			res, err := h.chat("default")
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		synctest.Wait()
		start := time.Now()
		res, err := h.chat("default")
		if err != nil || res.Target != "b/m2" {
			t.Fatalf("queued call: %+v %v", res, err)
		}
		if took := time.Since(start); took != 2*time.Second {
			t.Errorf("queue wait %s, want 2s", took)
		}
		close(gate)
		if r := <-done; r == nil || r.Target != "a/m1" {
			t.Errorf("first call: %+v", r)
		}
	})
}

// TestHoldForABreaker: a call whose only target is refused until a known
// moment that fits its deadline waits for it instead of failing (an outage
// shorter than the deadline costs time, not the answer); a key's breaker
// (bad key, no credit) and a wait longer than the time left fail at once.
func TestHoldForABreaker(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		first   *provider.Error
		wantErr error
		wantMin time.Duration // the call's time, at least
	}{
		{"open target breaker: wait, then the probe answers", 0, errServer, nil, 5 * time.Second},
		{"key breaker: no wait", 0, quota(time.Time{}), ErrNoTarget, 0},
		{"wait longer than the time left: no wait", 3 * time.Second, errServer, ErrNoTarget, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, map[string]*Route{
					"default": {Targets: targets("a/m1"), Timeout: tt.timeout, Retry: Retry{MaxAttempts: 1},
						Breaker: Breaker{FailureRatio: new(1.0), MinCalls: 1, Failures: new(1), InitialCooldown: 5 * time.Second}},
				}, nil)
				h.ads["a"].on("m1", reply{err: tt.first}, reply{})
				if _, err := h.chat("default"); err == nil {
					t.Fatal("first call should fail")
				}
				start := time.Now()
				res, err := h.chat("default")
				took := time.Since(start)
				if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
					t.Fatalf("res=%+v err=%v, want %v", res, err, tt.wantErr)
				}
				if took < tt.wantMin || took > tt.wantMin+holdSpread {
					t.Errorf("took %v, want %v (+ at most %v)", took, tt.wantMin, holdSpread)
				}
				if err == nil && (res.Attempts != 1 || res.Waited < 5*time.Second) {
					t.Errorf("res=%+v: want one attempt after a 5s wait", res)
				}
				if err != nil && h.ads["a"].Calls("m1") != 1 {
					t.Errorf("upstream called %d times", h.ads["a"].Calls("m1"))
				}
			})
		})
	}
}

// TestBackoffHoldsNoRetrySlot: calls waiting out a server's retry-after do
// not use up the retry budget: ten calls in flight that all got a 429 all
// retry, though the budget allows two retry attempts at once. (The budget
// counts the retry attempts on the wire: each of these retries after its
// own retry-after, 2s to 11s; with sleeping calls holding slots, eight of
// these would fail. Calls leaving their backoff together are
// TestRetryBudgetAfterBackoff.)
func TestBackoffHoldsNoRetrySlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{
			"default": {Targets: targets("a/m1"), Retry: Retry{MaxAttempts: 2, Budget: new(0.0), MinRetryConcurrency: new(2)}},
		}, nil)
		var rs []reply
		for i := range 10 {
			rs = append(rs, reply{err: rateLimited(time.Duration(2+i) * time.Second), delay: 100 * time.Millisecond})
		}
		h.ads["a"].on("m1", append(rs, reply{})...)
		var wg sync.WaitGroup
		errs := make(chan error, 10)
		for range 10 {
			wg.Go(func() {
				_, err := h.chat("default")
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	})
}

// TestConcurrencyLimitSentinel: a call that finds no free slot of its only
// target's concurrency limit before its queue_timeout, or before its own
// deadline, ends with ErrConcurrencyLimit and no attempt, not ErrNoTarget
// or ErrDeadline.
func TestConcurrencyLimitSentinel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration // the second call's
		wait    time.Duration // how long it waits in line
	}{
		{"queue timeout", 0, time.Second},
		{"call deadline", 500 * time.Millisecond, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, map[string]*Route{
					"default": {Targets: targets("a/m1"), MaxConcurrency: 1, QueueTimeout: time.Second},
				}, nil)
				gate := make(chan struct{})
				h.ads["a"].on("m1", reply{block: gate}, reply{text: "never"})
				go h.chat("default")
				synctest.Wait() // the first call holds the slot
				start := time.Now()
				_, err := h.eng.Chat(context.Background(), &Call{Route: "default", Request: userReq("hello"), Timeout: tc.timeout})
				close(gate)
				var re *RouteError
				if !errors.Is(err, ErrConcurrencyLimit) || !errors.As(err, &re) || len(re.Attempts) != 0 {
					t.Fatalf("err = %v, want a RouteError wrapping ErrConcurrencyLimit without attempts", err)
				}
				if errors.Is(err, ErrNoTarget) || errors.Is(err, ErrDeadline) {
					t.Errorf("err = %v also reads as ErrNoTarget or ErrDeadline", err)
				}
				if took := time.Since(start); took != tc.wait {
					t.Errorf("waited %s in line, want %s", took, tc.wait)
				}
				if n := h.ads["a"].Calls("m1"); n != 1 {
					t.Errorf("%d upstream calls, want only the first call's", n)
				}
			})
		})
	}
}
