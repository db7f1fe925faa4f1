package resilience

import (
	"context"
	"testing"

	"github.com/llmguard/llmguard/config"
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
			for i := 0; i < 20; i++ {
				h := newHarness(t, map[string]*config.Route{"default": {Targets: targets("a/m1")}}, nil)
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
	}
}
