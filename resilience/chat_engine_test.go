package resilience

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
)

// noStream is an adapter that cannot stream, as MCP sampling.
type noStream struct{ *fakeAdapter }

func (noStream) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	return nil, &provider.Error{Err: errors.ErrUnsupported, Verdict: classify.Verdict{Class: classify.Unknown,
		Scope: classify.ScopeRequest, Fallback: true, Message: "does not stream"}}
}

// A Chat is a stream upstream: silence during the answer is the idle
// timeout's, a failure during it is an attempt's failure like any other
// (the client has seen nothing), the call's deadline bounds the whole, and
// an adapter that cannot stream is called with Chat.
func TestChatThroughStream(t *testing.T) {
	route := func() map[string]*Route {
		return map[string]*Route{"default": {
			Targets: targets("a/m1", "b/m2"), Timeout: time.Minute, Retry: Retry{MaxAttempts: 2},
			Stream: Timeouts{HeaderTimeout: 6 * time.Second, FirstTokenTimeout: 6 * time.Second, IdleTimeout: 5 * time.Second},
		}}
	}
	midErr := perr(classify.Overloaded, 529, classify.ScopeModel, true, true, 0)
	midErr.AfterFirstToken = true
	tests := []struct {
		name      string
		a         []reply
		timeout   time.Duration
		wantErr   error
		target    string
		attempts  int
		took      time.Duration
		aFailures int64
		requestID string // of the answer: "req_ok" for a plain Chat
	}{
		{"silence during the answer moves on", []reply{{chunks: []string{"he", "llo"}, stallAfter: 1}}, 0, nil, "b/m2", 2, 5 * time.Second, 1, "req_stream"},
		{"a stream broken during the answer is asked for whole", []reply{{chunks: []string{"he"}, midErr: midErr}, {}}, 0, nil, "a/m1", 2, 0, 0, "req_ok"},
		{"the call's deadline ends the answer", []reply{{chunks: []string{"he", "llo"}, stallAfter: 1}}, 3 * time.Second, ErrDeadline, "", 1, 3 * time.Second, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, route(), nil)
				h.ads["a"].on("m1", tt.a...)
				start := time.Now()
				res, err := h.eng.Chat(context.Background(), &Call{Request: userReq("x"), Timeout: tt.timeout})
				took := time.Since(start)
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("err = %v, want %v", err, tt.wantErr)
					}
				} else if err != nil || res.Target != tt.target || res.Attempts != tt.attempts {
					t.Fatalf("res %+v err %v; want %s after %d attempts", res, err, tt.target, tt.attempts)
				} else if want := tt.requestID; want != "" && res.Response.RequestID != want {
					t.Errorf("answered by request id %q, want %q", res.Response.RequestID, want)
				}
				if took < tt.took || took > tt.took+time.Second {
					t.Errorf("took %v, want %v", took, tt.took)
				}
				if st := statusOf(h.eng, "a/m1"); st.Failures != tt.aFailures {
					t.Errorf("a/m1: %d failures, want %d", st.Failures, tt.aFailures)
				}
			})
		})
	}
	t.Run("after a broken stream, Chats to the target go whole for its cooldown", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1"), Breaker: Breaker{Cooldown: 30 * time.Second}}}, nil)
			h.ads["a"].on("m1", reply{chunks: []string{"he"}, midErr: midErr}, reply{}, reply{}, reply{chunks: []string{"x"}})
			for i, want := range []string{"req_ok", "req_ok", "req_stream"} {
				if i == 2 {
					time.Sleep(31 * time.Second)
				}
				res, err := h.eng.Chat(context.Background(), &Call{Request: userReq("x")})
				if err != nil || res.Response.RequestID != want {
					t.Fatalf("call %d: res %+v err %v; want an answer from %s", i+1, res, err, want)
				}
			}
			if n := h.ads["a"].Calls("m1"); n != 4 {
				t.Errorf("%d upstream calls, want 4 (broken stream, whole, whole, stream again)", n)
			}
			if st := statusOf(h.eng, "a/m1"); st.Failures != 0 {
				t.Errorf("the broken stream was held against a/m1: %+v", st)
			}
		})
	})
	t.Run("an adapter that cannot stream is called with Chat", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1")}}, func(o *Options) {
				o.Adapters["a"] = noStream{o.Adapters["a"].(*fakeAdapter)}
			})
			h.ads["a"].on("m1", reply{text: "whole"})
			res, err := h.eng.Chat(context.Background(), &Call{Request: userReq("x")})
			if err != nil || res.Response.Text != "whole" || res.Attempts != 1 || res.Response.RequestID != "req_ok" {
				t.Fatalf("res %+v err %v", res, err)
			}
		})
	})
}
