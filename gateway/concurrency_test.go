package gateway

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
)

// concurrencyConfig: one target with one slot, each answer holding it 2 s
// (route hold); route busy waits 100 ms for the slot (its queue_timeout),
// busy-deadline its whole 1 s timeout.
const concurrencyConfig = mockProviders + `routes:
  hold:
    targets: ["openai/gpt-4o+fault=200@2s"]
    max_concurrency: 1
  busy:
    targets: ["openai/gpt-4o+fault=200@2s"]
    queue_timeout: 100ms
  busy-deadline:
    targets: ["openai/gpt-4o+fault=200@2s"]
    queue_timeout: 5s
    timeout: 1s
`

// TestConcurrencyLimitRefusal: a call that finds no free slot of its
// target's concurrency limit in time, because its queue_timeout or its own
// deadline ended the wait, made no upstream attempt: the gateway was busy,
// not the upstream slow. It gets 503 in the client's dialect with the
// one line that says so, Retry-After and x-should-retry: true.
func TestConcurrencyLimitRefusal(t *testing.T) {
	tests := []struct {
		route, path, errType string
	}{
		{"busy", "/v1/chat/completions", "service_unavailable_error"},
		{"busy", "/v1/messages", "overloaded_error"},
		{"busy-deadline", "/v1/chat/completions", "service_unavailable_error"},
	}
	for _, tt := range tests {
		t.Run(tt.route+tt.path, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := newStackConfig(t, concurrencyConfig, nil)
				var wg sync.WaitGroup
				wg.Go(func() {
					if r := st.post(t, "/v1/chat/completions", oaBody("hold", false, "")); r.status != 200 {
						t.Errorf("the call holding the slot: %d %s", r.status, r.body)
					}
				})
				synctest.Wait() // it holds the slot, its answer 2 s away
				body := oaBody(tt.route, false, "")
				if strings.HasPrefix(tt.path, "/v1/messages") {
					body = anBody(tt.route, false, "")
				}
				r := st.post(t, tt.path, body)
				wg.Wait()
				if r.status != 503 {
					t.Fatalf("status %d, want 503: %s", r.status, r.body)
				}
				m := decodeJSON(t, r.body)
				if got := dig(m, "error", "type"); got != tt.errType {
					t.Errorf("error.type = %v, want %s", got, tt.errType)
				}
				msg, _ := dig(m, "error", "message").(string)
				if strings.ContainsAny(msg, "\r\n") || !strings.Contains(msg, "every target is at its concurrency limit") ||
					!strings.Contains(msg, "openai/gpt-4o") {
					t.Errorf("message %q: want one line saying the target is at its concurrency limit", msg)
				}
				if got := r.header.Get("Retry-After"); got != "1" {
					t.Errorf("retry-after = %q, want 1", got)
				}
				if got := r.header.Get("X-Should-Retry"); got != "true" {
					t.Errorf("x-should-retry = %q, want true", got)
				}
				if n := len(st.mock.Requests()); n != 1 {
					t.Errorf("%d upstream requests, want only the holding call's", n)
				}
			})
		})
	}
}
