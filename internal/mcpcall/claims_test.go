package mcpcall

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
)

// replicaStore is one replica's Store with Claims over a ResultStore the
// replicas share (as mcpproxy's is over Redis); results are their text.
type replicaStore struct{ rs state.ResultStore }

func (s replicaStore) Get(ctx context.Context, key string) (*result, bool, error) {
	raw, _, err := s.rs.Result(ctx, key)
	if raw == nil || err != nil {
		return nil, false, err
	}
	return &result{string(raw)}, true, nil
}

func (s replicaStore) Set(ctx context.Context, key string, v *result, ttl time.Duration) error {
	return s.rs.Publish(ctx, key, []byte(v.text), ttl)
}

func (s replicaStore) Claim(ctx context.Context, key string, ttl time.Duration) (*result, bool, bool, error) {
	raw, claimed, err := s.rs.Claim(ctx, key, ttl)
	if raw != nil {
		return &result{string(raw)}, true, false, err
	}
	return nil, false, claimed, err
}

func (s replicaStore) Peek(ctx context.Context, key string) (*result, bool, bool, error) {
	raw, inFlight, err := s.rs.Result(ctx, key)
	if raw != nil {
		return &result{string(raw)}, true, inFlight, err
	}
	return nil, false, inFlight, err
}

func (s replicaStore) Release(ctx context.Context, key string) error { return s.rs.Release(ctx, key) }

// TestClaimsAcrossReplicas: two Groups (replicas) sharing a ResultStore.
// A duplicate reaching B while A's call runs waits for A's result (B runs
// nothing); when A's call fails, B claims the key and runs; when A's call
// outlasts B's flight, B gives up at its deadline without running.
func TestClaimsAcrossReplicas(t *testing.T) {
	errA := errors.New("a failed")
	for _, tc := range []struct {
		name     string
		aErr     error
		runFor   time.Duration // B's flight deadline (0: none)
		want     string        // what B gets
		wantErr  error
		bRuns    int32
		bTookMax time.Duration
	}{
		{name: "waits for the result", want: "from a", bRuns: 0, bTookMax: time.Second},
		{name: "claims when the first fails", aErr: errA, want: "from b", bRuns: 1, bTookMax: 2 * time.Second},
		{name: "gives up at its deadline", runFor: 500 * time.Millisecond, wantErr: context.DeadlineExceeded, bRuns: 0, bTookMax: 600 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rs := memstore.NewResults()
				group := func() *Group[*result, string] {
					return NewGroup[*result, string](&GroupOptions[*result]{Store: replicaStore{rs}, TTL: time.Minute, Logger: discard()})
				}
				a, b := group(), group()
				var bRuns atomic.Int32
				var wg sync.WaitGroup
				wg.Go(func() {
					a.Do(context.Background(), "k", nil, nil, func(ctx context.Context, _ func(string)) (*result, error) {
						time.Sleep(time.Second)
						return &result{"from a"}, tc.aErr
					})
				})
				time.Sleep(100 * time.Millisecond)
				start := time.Now()
				got, _, err := b.Do(context.Background(), "k", &CallOptions{RunFor: tc.runFor}, nil, func(ctx context.Context, _ func(string)) (*result, error) {
					bRuns.Add(1)
					time.Sleep(time.Second)
					return &result{"from b"}, nil
				})
				took := time.Since(start)
				wg.Wait()
				if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && (got == nil || got.text != tc.want)) {
					t.Errorf("b got %+v, %v; want %q, %v", got, err, tc.want, tc.wantErr)
				}
				if n := bRuns.Load(); n != tc.bRuns {
					t.Errorf("b ran its call %d times, want %d", n, tc.bRuns)
				}
				if took > tc.bTookMax {
					t.Errorf("b took %v, want at most %v", took, tc.bTookMax)
				}
			})
		})
	}
}
