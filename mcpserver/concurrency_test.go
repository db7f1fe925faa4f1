package mcpserver

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/config"
)

// TestConcurrencyLimitLine: a call that finds no free slot of its target's
// concurrency limit within queue_timeout made no upstream attempt: the
// agent gets an isError result whose one line says llmguard's limit is
// full and when to retry, not that a breaker is open or a key missing.
func TestConcurrencyLimitLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, []string{"openai/gpt-4o+fault=200@2s"}, nil, func(rt *config.Route) {
			rt.MaxConcurrency, rt.QueueTimeout = 1, 100*time.Millisecond
		})
		cs := r.connect(t, nil, nil)
		var wg sync.WaitGroup
		wg.Go(func() { callOK(t, cs, "ask", map[string]any{"prompt": "hold the slot"}, "") })
		<-r.arrived // the first call holds the slot, its answer 2 s away
		line := errorLine(t, callTool(t, cs, "ask", map[string]any{"prompt": "no slot"}))
		wg.Wait()
		wantAll(t, line, "every target is at its concurrency limit", "openai/gpt-4o", "retry in a few seconds")
		for _, wrong := range []string{"circuit breaker", "provider key"} {
			if strings.Contains(line, wrong) {
				t.Errorf("%q blames a %s", line, wrong)
			}
		}
		if n := len(r.upstream()); n != 1 {
			t.Errorf("%d upstream requests, want only the holding call's", n)
		}
	})
}
