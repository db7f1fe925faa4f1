package resilience

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/config"
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
					h := newHarness(t, map[string]*config.Route{
						"default": {Targets: targets("a/m", "b/m", "c/m"), Timeout: timeout,
							Retry:  config.Retry{MaxAttempts: 5, MaxTotalAttempts: 50, BaseDelay: 300 * time.Millisecond, MaxDelay: 5 * time.Second},
							Stream: config.StreamPolicy{HeaderTimeout: 6 * time.Second, FirstTokenTimeout: 4 * time.Second},
						},
					}, func(o *Options) {
						realClock(o)
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
