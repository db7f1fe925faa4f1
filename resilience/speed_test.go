package resilience

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/provider"
)

// A Chat whose answer cannot be long goes plain once the target has shown
// its pace: a request bounded by max_tokens, after speedSamples answers
// whose slowest pace makes that many tokens (four times over) come within
// the first-token timeout. Otherwise it streams: no max_tokens, a target
// too slow, before the pace is known. The fake answers a stream with
// request id req_stream and a plain Chat with req_ok, 500 output tokens
// each; the default route waits 15 s for a first token.
func TestChatPlainAtItsPace(t *testing.T) {
	tests := []struct {
		name      string
		maxTokens int
		delay     time.Duration // each answer's time
		want      []string      // the request ids of the answers, in order
	}{
		{"quick answers: plain after eight", 256, 200 * time.Millisecond,
			[]string{"req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_ok", "req_ok"}},
		{"no max_tokens: always a stream", 0, 200 * time.Millisecond,
			[]string{"req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream"}},
		{"too slow for its max_tokens: a stream", 256, 8 * time.Second, // 16 ms a token: 256 of them, 4x, is 16.4 s
			[]string{"req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream"}},
		{"huge max_tokens: a stream", 1 << 21, time.Microsecond,
			[]string{"req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream", "req_stream"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1")}}, nil)
				h.ads["a"].on("m1", reply{delay: tt.delay})
				var got []string
				for range tt.want {
					req := userReq("x")
					req.MaxTokens = tt.maxTokens
					res, err := h.eng.Chat(context.Background(), &Call{Request: req})
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, res.Response.RequestID)
				}
				if strings.Join(got, " ") != strings.Join(tt.want, " ") {
					t.Errorf("answers %v, want %v", got, tt.want)
				}
			})
		})
	}
}

// A plain call asked for by the target's pace is cut at the first-token
// timeout plus the answer's expected time (its max_tokens at the pace,
// four times over): a timeout of the target's. The target's next Chats
// stream again until they have shown their pace anew.
func TestChatPlainCutAtItsPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1")}}, nil)
		var script []reply
		for range speedSamples {
			script = append(script, reply{delay: 200 * time.Millisecond}) // 400 µs a token
		}
		script = append(script, reply{hang: true}, reply{delay: 200 * time.Millisecond})
		h.ads["a"].on("m1", script...)
		chat := func() (*Result, error) {
			req := userReq("x")
			req.MaxTokens = 256 // expected: 256 x 400 µs x 4 = 409.6 ms
			return h.eng.Chat(context.Background(), &Call{Request: req})
		}
		for range speedSamples {
			if _, err := chat(); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		_, err := chat()
		took := time.Since(start)
		var re *RouteError
		if !errors.As(err, &re) || len(re.Attempts) != 1 {
			t.Fatalf("err = %v, want the route's failure after one attempt", err)
		}
		v := re.Attempts[0].Err.Verdict
		if want := 15*time.Second + 409600*time.Microsecond; took != want || v.Class != classify.Timeout ||
			v.Message != "timeout: no response within 15.41s" {
			t.Errorf("after %v: %s %q; want a timeout after %v", took, v.Class, v.Message, want)
		}
		res, err := chat()
		if err != nil || res.Response.RequestID != "req_stream" {
			t.Errorf("next: res %+v err %v; want a stream again", res, err)
		}
	})
}

// The pace: the slowest recent answer's time per token, worn down by an
// eighth per faster answer; an answer that thinks makes the target stream
// for good; forget starts over.
func TestAnswerSpeed(t *testing.T) {
	const first = 15 * time.Second
	answer := func(out int) *provider.Response { return &provider.Response{Usage: provider.Usage{OutputTokens: out}} }
	req := &provider.Request{MaxTokens: 100}
	var s answerSpeed
	for range speedSamples - 1 {
		s.note(time.Second, answer(100)) // 10 ms a token
	}
	if _, ok := s.expected(req, first); ok {
		t.Fatal("plain before speedSamples answers")
	}
	s.note(0, answer(100))           // no time: no sample
	s.note(time.Second, answer(0))   // no tokens: no sample
	s.note(time.Second, answer(100)) // the eighth
	if expect, ok := s.expected(req, first); !ok || expect != 4*time.Second {
		t.Fatalf("expected = %v, %v; want 4s", expect, ok)
	}
	s.note(time.Second, answer(1000)) // faster: 10 ms wears down by an eighth
	if got := time.Duration(s.perToken.Load()); got != 10*time.Millisecond-10*time.Millisecond/8 {
		t.Errorf("pace %v after a faster answer", got)
	}
	s.note(40*time.Second, answer(100)) // 400 ms a token: 100 of them, 4x, is 160 s
	if _, ok := s.expected(req, first); ok {
		t.Error("plain after a slow answer")
	}
	s.forget()
	if _, ok := s.expected(req, first); ok {
		t.Error("plain right after forget")
	}
	for range speedSamples {
		s.note(time.Millisecond, answer(100))
	}
	// 10 µs a token: 10,000 of them, 4x, is 400 ms.
	if expect, ok := s.expected(&provider.Request{MaxTokens: 10000}, time.Second); !ok || expect != 400*time.Millisecond {
		t.Errorf("expected = %v, %v; want 400ms", expect, ok)
	}
	if _, ok := s.expected(&provider.Request{MaxTokens: 10000}, 399*time.Millisecond); ok {
		t.Error("plain with an expected time past the first-token timeout")
	}
	s.note(time.Millisecond, &provider.Response{Usage: provider.Usage{OutputTokens: 100, ReasoningTokens: 10}})
	if _, ok := s.expected(req, first); ok {
		t.Error("plain after an answer that thought")
	}
}

// A plain call asked for by the target's pace that hears nothing for
// longer than silent_after and then loses its connection timed out, as a
// stream does (silent.go): the call falls back at once instead of
// retrying the target.
func TestChatPlainSilentHangUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1", "b/m2"), Retry: Retry{MaxAttempts: 3}}}, nil)
		var script []reply
		for range speedSamples {
			script = append(script, reply{delay: 200 * time.Millisecond})
		}
		reset := perr(classify.Network, 0, classify.ScopeRequest, true, true, 0)
		script = append(script, reply{delay: 6 * time.Second, err: reset})
		h.ads["a"].on("m1", script...)
		chat := func() (*Result, error) {
			req := userReq("x")
			req.MaxTokens = 256
			return h.eng.Chat(context.Background(), &Call{Request: req})
		}
		for range speedSamples {
			if _, err := chat(); err != nil {
				t.Fatal(err)
			}
		}
		var msgs []string
		for _, e := range h.Events() {
			if e.Kind == EventFailure {
				msgs = append(msgs, e.Verdict.Message)
			}
		}
		if len(msgs) != 0 {
			t.Fatalf("failures while learning: %v", msgs)
		}
		res, err := chat()
		if err != nil || res.Target != "b/m2" || res.Attempts != 2 || h.ads["a"].Calls("m1") != speedSamples+1 {
			t.Fatalf("res %+v err %v, a called %d times; want b/m2 after one attempt on a", res, err, h.ads["a"].Calls("m1"))
		}
		for _, e := range h.Events() {
			if e.Kind == EventFailure {
				msgs = append(msgs, e.Verdict.Message)
			}
		}
		if len(msgs) != 1 || msgs[0] != "timeout: no response headers for 6s, then the connection closed" {
			t.Errorf("failures %q, want one timeout", msgs)
		}
	})
}
