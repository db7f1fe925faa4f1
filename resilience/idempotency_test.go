package resilience

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmguard/llmguard/provider"
)

func TestResultCacheBounds(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name                 string
		maxEntries, maxBytes int64
		text                 string
		maxKept              int
	}{
		{"entries bound", 4, 1 << 20, "small", 4},
		{"bytes bound", 1000, 8 << 10, strings.Repeat("x", 2000), 4}, // ~2.3 KB each in 8 KiB
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := newResultCache(tt.maxEntries, tt.maxBytes)
			for i := range 50 {
				rc.put(fmt.Sprint("k", i), &Result{Response: &provider.Response{Text: tt.text}}, now.Add(time.Hour))
			}
			rc.c.CleanUp()
			kept := 0
			for i := range 50 {
				if _, ok := rc.get(fmt.Sprint("k", i), now); ok {
					kept++
				}
			}
			if kept == 0 || kept > tt.maxKept {
				t.Errorf("kept %d entries, want 1..%d", kept, tt.maxKept)
			}
		})
	}
}

func TestResultCacheExpiryAndCopies(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rc := newResultCache(10, 1<<20)
	orig := &Result{Response: &provider.Response{Text: "a"}, Attempts: 3, Cost: 1}
	rc.put("k", orig, now.Add(time.Minute))
	orig.Response.Text = "mutated"
	got, ok := rc.get("k", now.Add(59*time.Second))
	if !ok || got.Response.Text != "a" || !got.Cached || got.Attempts != 0 || got.Cost != 0 {
		t.Fatalf("get = %+v %v", got, ok)
	}
	got.Response.Text = "changed by a caller"
	if again, _ := rc.get("k", now); again.Response.Text != "a" {
		t.Error("a caller's change reached the cache")
	}
	if _, ok := rc.get("k", now.Add(time.Minute)); ok {
		t.Error("served after its TTL")
	}
}
