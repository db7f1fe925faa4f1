package resilience

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/providertest"
	"github.com/llmguard/llmguard/provider"
)

// TestStreamCloseDuringRecv closes the stream from another goroutine while
// the first Recv after the replayed chunk is arming the idle timer or
// blocked in the upstream: Close is documented as safe at any time, so
// -race must stay quiet and the blocked Recv must end.
func TestStreamCloseDuringRecv(t *testing.T) {
	for _, tc := range []struct {
		name string
		// recvFirst: the goroutine consumes the replayed chunk before Close
		// (so Close races with the Recv that arms the idle timer); otherwise
		// Close races with the replay itself.
		recvFirst bool
	}{
		{"after-replay", true},
		{"during-replay", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				for i := 0; i < 20; i++ {
					h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1")}}, nil)
					h.ads["a"].on("m1", reply{chunks: []string{"one", "two"}, stallAfter: 1})
					sr, err := h.eng.Stream(context.Background(), &Call{Request: userReq("x")})
					if err != nil {
						t.Fatal(err)
					}
					ready := make(chan struct{})
					done := make(chan error, 1)
					go func() {
						if tc.recvFirst {
							if c, err := sr.Stream.Recv(); err != nil || c.Text != "one" {
								t.Errorf("replayed chunk = %q, %v", c.Text, err)
							}
						}
						close(ready)
						var err error
						for err == nil {
							_, err = sr.Stream.Recv()
						}
						done <- err
					}()
					<-ready
					if err := sr.Stream.Close(); err != nil {
						t.Errorf("Close = %v", err)
					}
					if err := <-done; err == nil {
						t.Error("Recv after Close returned no error")
					} else if pe := provider.AsError(err); pe != nil && !pe.AfterFirstToken {
						t.Errorf("Recv after Close: %v is not marked after the first token", err)
					}
					if st := statusOf(h.eng, "a/m1"); st.Failures != 0 {
						t.Errorf("closing the stream counted %d failures against the target", st.Failures)
					}
				}
			})
		})
	}
}

// TestStreamFirstTokenIsContent: the first chunk of a stream may carry only
// metadata (Anthropic's message_start, OpenAI's role-only delta). The
// engine waits, under the first-token timeout, for a chunk with content: a
// failure or a stall before it falls back, and the metadata is replayed.
func TestStreamFirstTokenIsContent(t *testing.T) {
	route := func() map[string]*Route {
		return map[string]*Route{"default": {Targets: targets("a/m1", "b/m2"), Retry: Retry{MaxAttempts: 1},
			Stream: Timeouts{FirstTokenTimeout: 2 * time.Second, IdleTimeout: 5 * time.Second}}}
	}
	t.Run("error after metadata falls back", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, route(), nil)
			h.ads["a"].on("m1", reply{meta: true, chunks: []string{}, midErr: errOverloaded})
			sr, err := h.eng.Stream(context.Background(), &Call{Request: userReq("x")})
			if err != nil {
				t.Fatal(err)
			}
			defer sr.Stream.Close()
			if sr.Target != "b/m2" || sr.Fallbacks != 1 {
				t.Errorf("target %s after %d fallbacks, want b/m2 after 1", sr.Target, sr.Fallbacks)
			}
			if st := statusOf(h.eng, "a/m1"); st.Successes != 0 || st.Failures != 1 {
				t.Errorf("a/m1: %d successes, %d failures; want 0, 1", st.Successes, st.Failures)
			}
		})
	})
	t.Run("stall after metadata hits the first-token timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, route(), nil)
			h.ads["a"].on("m1", reply{meta: true, stallAfter: -1})
			start := time.Now()
			sr, err := h.eng.Stream(context.Background(), &Call{Request: userReq("x")})
			if err != nil {
				t.Fatal(err)
			}
			defer sr.Stream.Close()
			if took := time.Since(start); sr.Target != "b/m2" || took != 2*time.Second {
				t.Errorf("target %s after %s, want b/m2 after the 2s first-token timeout", sr.Target, took)
			}
			var failed *classify.Verdict
			for _, ev := range h.Events() {
				if ev.Kind == EventFailure && ev.Target == "a/m1" {
					failed = ev.Verdict
				}
			}
			if failed == nil || failed.Class != classify.Timeout {
				t.Errorf("a/m1's failure verdict = %+v, want a timeout", failed)
			}
		})
	})
	t.Run("metadata is replayed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, route(), nil)
			h.ads["a"].on("m1", reply{meta: true, chunks: []string{"hi"}})
			sr, err := h.eng.Stream(context.Background(), &Call{Request: userReq("x")})
			if err != nil {
				t.Fatal(err)
			}
			defer sr.Stream.Close()
			got, err := providertest.Collect(sr.Stream)
			if err != io.EOF {
				t.Fatal(err)
			}
			want := []provider.Chunk{{Model: "m1-20261130", ID: "msg_fake"}, {Text: "hi"},
				{FinishReason: provider.FinishStop, Usage: &provider.Usage{InputTokens: 1000, OutputTokens: 500}}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			if st := statusOf(h.eng, "a/m1"); st.Successes != 1 {
				t.Errorf("a/m1: %d successes, want 1", st.Successes)
			}
		})
	})
}

// TestStreamIdleTimerRestsWhileNotWaiting: the idle timer times the waits
// of Recv only. A stream read past a wait and then left alone (its
// consumer slow, or gone without Close) has no timer firing over and over
// behind it: the timer rests until a Recv waits again, then times that
// wait in full.
func TestStreamIdleTimerRestsWhileNotWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1"),
			Stream: Timeouts{IdleTimeout: 4 * time.Second}}}, nil)
		h.ads["a"].on("m1", reply{chunks: []string{"one", "two", "three"}, stallAfter: 2})
		sr, err := h.eng.Stream(context.Background(), &Call{Request: userReq("x")})
		if err != nil {
			t.Fatal(err)
		}
		defer sr.Stream.Close()
		for _, want := range []string{"one", "two"} {
			if c, err := sr.Stream.Recv(); err != nil || c.Text != want {
				t.Fatalf("Recv = %q, %v; want %q", c.Text, err, want)
			}
		}
		es := sr.Stream.(*continuing).cur.(*engineStream)
		time.Sleep(10 * time.Second) // not waiting: the timer fires once, then rests
		es.mu.Lock()
		armed := es.timer.Stop()
		if armed {
			es.timer.Reset(es.idle) // armed again, as it was
		}
		es.mu.Unlock()
		if armed {
			t.Error("the idle timer is armed while no Recv waits")
		}
		start := time.Now()
		_, err = sr.Stream.Recv()
		if pe := provider.AsError(err); pe == nil || pe.Verdict.Class != classify.Timeout {
			t.Fatalf("stalled stream: err = %v", err)
		}
		if took := time.Since(start); took != 4*time.Second {
			t.Errorf("stall detected after %s, want 4s", took)
		}
	})
}
