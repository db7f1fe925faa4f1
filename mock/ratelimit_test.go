package mock

import (
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/internal/pipenet"
)

// TestRateLimit: with a RateLimit of 3 requests per 3 s, each key gets 3
// requests at once, announced counting down, then the provider's 429 with
// a retry-after; a second later the bucket has refilled one request.
func TestRateLimit(t *testing.T) {
	remaining := map[string]string{dialectAnthropic: "Anthropic-Ratelimit-Requests-Remaining",
		dialectOpenAI: "X-Ratelimit-Remaining-Requests", dialectAzure: "X-Ratelimit-Remaining-Requests"}
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := New(&Config{RateLimit: &RateLimit{Requests: 3, Per: 3 * time.Second}})
				ts := pipenet.NewServer(srv)
				defer ts.Close()
				do := func() *http.Response {
					resp, err := ts.Client().Do(call{api: a.name, model: a.model, text: "hi"}.request(ts.URL))
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					return resp
				}
				for i := 2; i >= 0; i-- {
					resp := do()
					if resp.StatusCode != 200 {
						t.Fatalf("request %d: status %d", 3-i, resp.StatusCode)
					}
					if h := remaining[a.name]; h != "" && resp.Header.Get(h) != strconv.Itoa(i) {
						t.Errorf("request %d: %s %q, want %d", 3-i, h, resp.Header.Get(h), i)
					}
				}
				resp := do()
				if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
					t.Errorf("fourth request: status %d retry-after %q, want 429 and 1", resp.StatusCode, resp.Header.Get("Retry-After"))
				}
				if h := remaining[a.name]; h != "" && resp.Header.Get(h) != "0" {
					t.Errorf("429 announces %s %q, want 0", h, resp.Header.Get(h))
				}
				time.Sleep(time.Second)
				if resp := do(); resp.StatusCode != 200 {
					t.Errorf("after 1 s: status %d, want a refilled request", resp.StatusCode)
				}
			})
		})
	}
}

func TestParseRateLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want *RateLimit
	}{
		{"60/1m", &RateLimit{Requests: 60, Per: time.Minute}},
		{"10/1s", &RateLimit{Requests: 10, Per: time.Second}},
		{"500", &RateLimit{Requests: 500, Per: time.Minute}},
		{"0/1s", nil}, {"ten/1s", nil}, {"10/soon", nil}, {"10/-1s", nil},
	} {
		got, err := ParseRateLimit(tc.in)
		if (tc.want == nil) != (err != nil) || (tc.want != nil && *got != *tc.want) {
			t.Errorf("ParseRateLimit(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}
