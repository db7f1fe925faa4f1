package resilience

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/classify"
)

// TestDeadlineProperty runs random bad nights (latencies, overloads, rate
// limits with waits, silent upstreams) over three targets and checks that no
// call, Chat or Stream, outlives its deadline.
func TestDeadlineProperty(t *testing.T) {
	const timeout = 20 * time.Second
	for seed := uint64(1); seed <= 40; seed++ {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("seed%d/stream=%v", seed, stream), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					r := rand.New(rand.NewPCG(seed, 99))
					h := newHarness(t, map[string]*Route{
						"default": {Targets: targets("a/m", "b/m", "c/m"), Timeout: timeout,
							Retry:  Retry{MaxAttempts: 5, MaxTotalAttempts: 50, BaseDelay: 300 * time.Millisecond, MaxDelay: 5 * time.Second},
							Stream: Timeouts{HeaderTimeout: 6 * time.Second, FirstTokenTimeout: 4 * time.Second},
						},
					}, func(o *Options) {
						o.Rand = rand.New(rand.NewPCG(seed, 7))
					})
					for _, p := range []string{"a", "b", "c"} {
						var script []reply
						for range 30 {
							rep := reply{delay: time.Duration(r.IntN(8000)) * time.Millisecond}
							switch r.IntN(6) {
							case 0:
								rep.err = errOverloaded
							case 1:
								rep.err = rateLimited(time.Duration(r.IntN(20)) * time.Second)
							case 2:
								rep.err = errServer
							case 3:
								rep.hang = true
							case 4:
								rep.stallAfter = -1 // streams: no first token
							default:
								rep.err = errOverloaded
							}
							script = append(script, rep)
						}
						h.ads[p].on("m", script...)
					}
					start := time.Now()
					var err error
					if stream {
						var sr *StreamResult
						if sr, err = h.eng.Stream(context.Background(), &Call{Request: userReq("x")}); err == nil {
							sr.Stream.Close()
						}
					} else {
						_, err = h.eng.Chat(context.Background(), &Call{Request: userReq("x")})
					}
					if took := time.Since(start); took > timeout {
						t.Errorf("call took %s, beyond its %s deadline (err %v)", took, timeout, err)
					}
					if err != nil && !errors.Is(err, ErrDeadline) && !errors.Is(err, ErrExhausted) && !errors.Is(err, ErrNoTarget) {
						t.Errorf("unexpected error %v", err)
					}
				})
			})
		}
	}
}

// TestChatAttemptBound: a silent upstream is cut off by whichever comes
// first, the header timeout (a timeout verdict, the call moves on) or the
// caller's deadline (the call ends with ErrDeadline), whether or not the
// attempt needed a timer of its own.
func TestChatAttemptBound(t *testing.T) {
	tests := []struct {
		name        string
		callerLimit time.Duration // 0 = no caller deadline
		wantTook    time.Duration
		wantErr     error
		wantTimeout bool // the attempt failed with a timeout verdict
	}{
		{"no caller deadline", 0, 6 * time.Second, ErrExhausted, true},
		{"caller deadline after the header timeout", 10 * time.Second, 6 * time.Second, ErrExhausted, true},
		{"caller deadline before the header timeout", 2 * time.Second, 2 * time.Second, ErrDeadline, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, map[string]*Route{"default": {
					Targets: targets("a/m1"), Timeout: time.Minute, Retry: Retry{MaxAttempts: 1},
					Stream: Timeouts{HeaderTimeout: 6 * time.Second},
				}}, nil)
				h.ads["a"].on("m1", reply{hang: true})
				ctx := callerContext(t, tt.callerLimit)
				start := time.Now()
				_, err := h.eng.Chat(ctx, &Call{Request: userReq("x")})
				if took := time.Since(start); took != tt.wantTook {
					t.Errorf("call took %s, want %s", took, tt.wantTook)
				}
				var re *RouteError
				if !errors.As(err, &re) || !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if got := re.Last() != nil && re.Last().Verdict.Class == classify.Timeout; got != tt.wantTimeout {
					t.Errorf("last attempt a timeout verdict = %v, want %v (%v)", got, tt.wantTimeout, err)
				}
				if h.ads["a"].CtxEnded("m1") != 1 {
					t.Errorf("the silent attempt's context ended %d times, want 1", h.ads["a"].CtxEnded("m1"))
				}
			})
		})
	}
}

// TestDeadlineCutIsNotIllHealth: an attempt cut short by the call's own
// remaining time or by the caller's deadline, before the full configured
// per-attempt timeout (header, first token), ends the call with ErrDeadline
// and counts nothing against the target.
func TestDeadlineCutIsNotIllHealth(t *testing.T) {
	tests := []struct {
		name          string
		stream        bool
		callTimeout   time.Duration // Call.Timeout
		callerTimeout time.Duration // the caller's context deadline
		rep           reply
	}{
		{"chat, call timeout before the header timeout", false, 2 * time.Second, 0, reply{hang: true}},
		{"chat, caller deadline before the header timeout", false, 0, 2 * time.Second, reply{hang: true}},
		{"stream headers, call timeout", true, 2 * time.Second, 0, reply{hang: true}},
		{"stream headers, caller deadline", true, 0, 2 * time.Second, reply{hang: true}},
		{"stream first token, call timeout", true, 2 * time.Second, 0, reply{stallAfter: -1}},
		{"stream first token, caller deadline", true, 0, 2 * time.Second, reply{meta: true, stallAfter: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, map[string]*Route{"default": {
					Targets: targets("a/m1", "b/m2"), Timeout: time.Minute, Retry: Retry{MaxAttempts: 1},
					Stream:  Timeouts{HeaderTimeout: 6 * time.Second, FirstTokenTimeout: 6 * time.Second},
					Breaker: Breaker{FailureRatio: new(1.0), MinCalls: 1, Failures: new(1)}, // one failure would open it
				}}, nil)
				h.ads["a"].on("m1", tt.rep, reply{})
				ctx := callerContext(t, tt.callerTimeout)
				start := time.Now()
				call := &Call{Request: userReq("x"), Timeout: tt.callTimeout}
				var err error
				if tt.stream {
					var sr *StreamResult
					if sr, err = h.eng.Stream(ctx, call); err == nil {
						sr.Stream.Close()
					}
				} else {
					_, err = h.eng.Chat(ctx, call)
				}
				if took := time.Since(start); took != 2*time.Second {
					t.Errorf("call took %s, want 2s", took)
				}
				if !errors.Is(err, ErrDeadline) {
					t.Errorf("err = %v, want ErrDeadline", err)
				}
				if n := h.ads["b"].Calls("m2"); n != 0 {
					t.Errorf("b/m2 called %d times after the deadline", n)
				}
				if st := statusOf(h.eng, "a/m1"); st.Breaker != "closed" || st.Failures != 0 {
					t.Errorf("a/m1 blamed for the deadline: %+v", st)
				}
				// The next call, with time to spare, is admitted to a/m1.
				if res, err := h.eng.Chat(context.Background(), &Call{Request: userReq("x")}); err != nil || res.Target != "a/m1" {
					t.Errorf("next call: res=%+v err=%v", res, err)
				}
			})
		})
	}
}

// callerContext is a caller's context with a timeout of d (none if d is 0),
// cancelled when the test ends.
func callerContext(t *testing.T, d time.Duration) context.Context {
	if d <= 0 {
		return context.Background()
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
