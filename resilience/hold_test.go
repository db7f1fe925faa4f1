package resilience

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/provider"
)

// countHold is a provider.Hold that counts its holders, as the gateway's
// pooled body does: its maker holds it first, and once the count is back
// to 0 the bytes are gone (Acquire false).
type countHold struct{ refs atomic.Int32 }

func newCountHold() *countHold {
	h := &countHold{}
	h.refs.Store(1) // the maker's
	return h
}

func (h *countHold) Acquire() bool {
	for {
		n := h.refs.Load()
		if n == 0 {
			return false
		}
		if h.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (h *countHold) Release() { h.refs.Add(-1) }

// heldReq is userReq with a Hold on its bytes.
func heldReq(h provider.Hold) *provider.Request {
	req := userReq("x")
	req.Passthrough = &provider.Passthrough{Hold: h}
	return req
}

// lateAdapter answers nothing until told, whatever its context says (an
// attempt busy encoding or sending, which does not look at it), noting
// whether its request was still held when it went on; then it fails.
type lateAdapter struct {
	started chan struct{}
	goOn    chan struct{}
	hold    *countHold
	held    atomic.Int32 // holders when it went on
}

func (l *lateAdapter) Name() string { return "b" }

func (l *lateAdapter) late() error {
	l.started <- struct{}{}
	<-l.goOn
	l.held.Store(l.hold.refs.Load())
	return ctxError("b", "m2", context.Canceled)
}

func (l *lateAdapter) Chat(context.Context, *provider.Request) (*provider.Response, error) {
	return nil, l.late()
}

func (l *lateAdapter) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	return nil, l.late()
}

// TestHedgeHoldsItsRequest: a hedge branch that loses and runs on after
// the call (its attempt busy, deaf to its cancellation) holds the call's
// request until its attempt returns, so that its maker, done with the
// call, cannot reuse the request's bytes while the branch may read them.
func TestHedgeHoldsItsRequest(t *testing.T) {
	bothWays(t, "hedge", func(t *testing.T, stream bool) {
		hold := newCountHold()
		late := &lateAdapter{started: make(chan struct{}, 1), goOn: make(chan struct{}), hold: hold}
		route := Route{Targets: targets("a/m1", "b/m2"), HedgeAfter: time.Second}
		h := newHarness(t, map[string]*Route{"default": &route}, func(o *Options) { o.Adapters["b"] = late })
		h.ads["a"].on("m1", reply{delay: 2 * time.Second})
		c := &Call{Request: heldReq(hold)}
		var err error
		if stream {
			var sr *StreamResult
			if sr, err = h.eng.Stream(context.Background(), c); err == nil {
				sr.Stream.Close()
			}
		} else {
			_, err = h.eng.Chat(context.Background(), c)
		}
		if err != nil {
			t.Fatal(err)
		}
		<-late.started // the hedge ran
		hold.Release() // the maker is done with the call
		if n := hold.refs.Load(); n != 1 {
			t.Errorf("%d holders once the call returned with its hedge branch still running, want 1 (the branch)", n)
		}
		close(late.goOn)
		synctest.Wait()
		if n := late.held.Load(); n != 1 {
			t.Errorf("the branch went on with %d holders, want 1 (itself)", n)
		}
		if n := hold.refs.Load(); n != 0 {
			t.Errorf("%d holders once the branch returned, want 0", n)
		}
	})
}

// TestSharedFlightHoldsItsRequest: a deduplicated call's flight, which
// runs on when its caller leaves, holds the caller's request until it
// ends.
func TestSharedFlightHoldsItsRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1")}}, nil)
		goOn := make(chan struct{})
		h.ads["a"].on("m1", reply{block: goOn})
		hold := newCountHold()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := h.eng.Chat(ctx, &Call{Request: heldReq(hold), IdempotencyKey: "k1"})
			done <- err
		}()
		synctest.Wait() // the flight is waiting for its answer
		cancel()        // its caller leaves
		if err := <-done; !errors.Is(err, ErrDeadline) {
			t.Fatalf("the caller that left got %v, want %v", err, ErrDeadline)
		}
		hold.Release()
		if n := hold.refs.Load(); n != 1 {
			t.Errorf("%d holders once the caller left with the flight running, want 1 (the flight)", n)
		}
		close(goOn)
		synctest.Wait()
		if n := hold.refs.Load(); n != 0 {
			t.Errorf("%d holders once the flight ended, want 0", n)
		}
	})
}
