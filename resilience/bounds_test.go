package resilience

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/heap"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/state/memstore"
)

// failAll answers every model with a model-scope 404, so that each call
// leaves a breaker record for its target.
type failAll struct{ provider.Adapter }

func (failAll) Name() string { return "c" }
func (failAll) Chat(context.Context, *provider.Request) (*provider.Response, error) {
	return nil, perr(classify.NotFound, 404, classify.ScopeModel, false, true, 0)
}
func (failAll) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	return nil, perr(classify.NotFound, 404, classify.ScopeModel, false, true, 0)
}

func inventingHarness(t *testing.T) *harness {
	return newHarness(t, map[string]*Route{"default": {Targets: targets("a/m1"), Retry: Retry{MaxAttempts: 1}}},
		func(o *Options) { o.Adapters["c"] = failAll{}; o.OnEvent = nil })
}

func (e *Engine) sizes() (runtimes, plans int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.runtimes), len(e.dynamic)
}

// 20,000 targets a client invents leave bounded state: runtimes, memoised
// route plans and breaker records (the run left 20,000 records).
func TestInventedTargetsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := inventingHarness(t)
		ctx := context.Background()
		for i := range 20000 {
			if _, err := h.eng.Chat(ctx, &Call{Route: fmt.Sprintf("c/invented-%d", i), Request: userReq("x")}); err == nil {
				t.Fatal("an invented target answered")
			}
		}
		rts, plans := h.eng.sizes()
		records := h.eng.store.(*memstore.Store).Len()
		t.Logf("after 20000 invented targets: %d runtimes, %d plans, %d breaker records", rts, plans, records)
		if rts > maxRuntimes || plans > maxPlans || records > memstore.DefaultMaxRecords {
			t.Errorf("%d runtimes (max %d), %d plans (max %d), %d records (max %d)", rts, maxRuntimes, plans, maxPlans, records, memstore.DefaultMaxRecords)
		}
		if n := len(h.eng.Status()); n > maxRuntimes {
			t.Errorf("Status lists %d targets", n)
		}
	})
}

// Huge names are refused before any state is built: ten calls naming 5 MB
// targets held +310 MB of heap in the run.
func TestHugeTargetNamesHoldNoMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := inventingHarness(t)
		ctx := context.Background()
		before := heap.Live()
		for i := range 10 {
			name := fmt.Sprintf("c/%d-%s", i, strings.Repeat("m", 5<<20))
			_, err := h.eng.Chat(ctx, &Call{Route: "default", Fallbacks: []string{name}, Request: userReq("x")})
			_, err2 := h.eng.Chat(ctx, &Call{Route: name, Request: userReq("x")})
			for _, e := range []error{err, err2} {
				if e == nil {
					continue
				}
				if len(e.Error()) > 400 {
					t.Errorf("error line of %d bytes", len(e.Error()))
				}
			}
			if err2 == nil {
				t.Error("a 5 MB target name was served")
			}
		}
		after := heap.Live()
		grown := int64(after) - int64(before)
		t.Logf("heap after ten 5 MB names: %+d KB", grown>>10)
		if grown > 8<<20 {
			t.Errorf("heap grew by %d MB", grown>>20)
		}
		runtime.KeepAlive(h)
	})
}

// State for invented targets expires: once the runtimes are full, those
// idle for longer than inventedTTL make room for new ones, which /status
// then lists; configured targets are never dropped.
func TestInventedRuntimesExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := inventingHarness(t)
		ctx := context.Background()
		for i := range maxRuntimes + 10 {
			h.eng.Chat(ctx, &Call{Route: fmt.Sprintf("c/old-%d", i), Request: userReq("x")})
		}
		time.Sleep(inventedTTL + time.Minute)
		h.eng.Chat(ctx, &Call{Route: "c/new", Request: userReq("x")})
		names := map[string]bool{}
		for _, ts := range h.eng.Status() {
			names[ts.Target] = true
		}
		if !names["c/new"] || !names["a/m1"] {
			t.Errorf("after the idle ones expired: c/new listed %v, a/m1 listed %v", names["c/new"], names["a/m1"])
		}
		if names["c/old-1"] {
			t.Error("an invented target idle past its TTL is still listed")
		}
	})
}
