package gateway

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

const repeatConfig = mockProviders + `routes:
  default:
    targets: [anthropic/claude-sonnet-4-5]
  down:
    targets: [anthropic/claude-sonnet-4-5-down+fault=529]
  limited:
    targets: ["openai/gpt-4o-limited+fault=429:1"]
  short:
    targets: [anthropic/claude-sonnet-4-5-short+fault=529]
    repeat_hold: 20s
  recovers:
    targets: ["anthropic/claude-sonnet-4-5-rec+fault=529,529,529,529,200"]
`

// TestRepeatHeld: a client's retry of a call the gateway retried to
// exhaustion (a persistent 529, a persistent 429) gets the same status and
// line at once, with no upstream attempt, x-should-retry: false,
// x-llmguard-repeat: true, x-llmguard-attempts: 0, a note saying when the
// call failed after how many attempts, and no retry-after sooner than the
// hold's end (none past max_client_wait).
func TestRepeatHeld(t *testing.T) {
	for _, d := range dialects() {
		for _, c := range []struct {
			route  string
			status int
		}{{"down", 503}, {"limited", 429}} {
			t.Run(d.name+"/"+c.route, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					st := newStackConfig(t, repeatConfig, nil)
					first := st.post(t, d.path, d.body(c.route, ""), d.hdr...)
					msg1, typ1, _ := errorFields(t, d.name, first.body)
					if first.status != c.status || first.header.Get("X-Llmguard-Attempts") != "4" || first.header.Get("X-Llmguard-Repeat") != "" {
						t.Fatalf("first call: %d attempts %q repeat %q: %s", first.status, first.header.Get("X-Llmguard-Attempts"),
							first.header.Get("X-Llmguard-Repeat"), first.body)
					}
					for i := range 3 {
						r := st.post(t, d.path, d.body(c.route, ""), d.hdr...)
						msg, typ, _ := errorFields(t, d.name, r.body)
						t.Logf("repeat %d: %d %v %s", i, r.status, r.header, r.body)
						if r.status != first.status || typ != typ1 {
							t.Errorf("repeat %d: %d %s, want %d %s", i, r.status, typ, first.status, typ1)
						}
						for h, want := range map[string]string{"X-Llmguard-Repeat": "true", "X-Should-Retry": "false",
							"X-Llmguard-Attempts": "0", "Retry-After": ""} {
							if got := r.header.Get(h); got != want {
								t.Errorf("repeat %d: %s %q, want %q", i, h, got, want)
							}
						}
						if !strings.HasPrefix(msg, msg1+"; repeat of a call that failed at ") ||
							!strings.Contains(msg, " after 4 upstream attempts; not sent upstream again before ") || strings.ContainsAny(msg, "\r\n") {
							t.Errorf("repeat %d: message %q, want %q and the note", i, msg, msg1)
						}
					}
					if n := len(st.mock.Requests()); n != 4 {
						t.Errorf("%d upstream requests for the call and its 3 repeats, want 4", n)
					}
				})
			})
		}
	}
}

// TestRepeatPerKey: a held failure answers only the gateway key that
// made the call; another key's identical call runs.
func TestRepeatPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newStackConfig(t, repeatConfig, &Options{Keys: []string{"key-one", "key-two"}})
		body := oaBody("down", false, "")
		for i, c := range []struct {
			key, repeat string
			upstream    int
		}{{"key-one", "", 4}, {"key-one", "true", 4}, {"key-two", "", 8}, {"key-two", "true", 8}, {"key-one", "true", 8}} {
			r := st.post(t, "/v1/chat/completions", body, "Authorization", "Bearer "+c.key)
			if r.status != 503 || r.header.Get("X-Llmguard-Repeat") != c.repeat {
				t.Errorf("call %d (%s): %d repeat %q, want 503 repeat %q: %s", i, c.key, r.status, r.header.Get("X-Llmguard-Repeat"), c.repeat, r.body)
			}
			if n := len(st.mock.Requests()); n != c.upstream {
				t.Errorf("call %d (%s): %d upstream requests, want %d", i, c.key, n, c.upstream)
			}
		}
	})
}

// TestRepeatHoldEnds: a hold within max_client_wait says when it ends
// (retry-after); once it has, the call runs again. A target answering any
// other call ends a hold at once.
func TestRepeatHoldEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newStackConfig(t, repeatConfig, nil)
		advance := time.Sleep
		body := anBody("short", false, "")
		post := func() reply { return st.post(t, "/v1/messages", body, "anthropic-version", "2023-06-01") }
		post()
		advance(5 * time.Second)
		if r := post(); r.header.Get("X-Llmguard-Repeat") != "true" || r.header.Get("Retry-After") != "15" || r.header.Get("Retry-After-Ms") == "" {
			t.Errorf("repeat within a 20s hold, 5s on: repeat %q retry-after %q (ms %q), want true 15",
				r.header.Get("X-Llmguard-Repeat"), r.header.Get("Retry-After"), r.header.Get("Retry-After-Ms"))
		}
		advance(15 * time.Second)
		if r := post(); r.header.Get("X-Llmguard-Repeat") != "" || r.header.Get("X-Llmguard-Attempts") != "4" {
			t.Errorf("after the hold: repeat %q attempts %q, want the call run", r.header.Get("X-Llmguard-Repeat"), r.header.Get("X-Llmguard-Attempts"))
		}

		rec := oaBody("recovers", false, "")
		if r := st.post(t, "/v1/chat/completions", rec); r.status != 503 {
			t.Fatalf("recovers: %d %s", r.status, r.body)
		}
		if r := st.post(t, "/v1/chat/completions", rec); r.header.Get("X-Llmguard-Repeat") != "true" {
			t.Fatalf("recovers, repeat: %d %v", r.status, r.header)
		}
		other := strings.Replace(rec, "Say hello", "Say goodbye", 1)
		if r := st.post(t, "/v1/chat/completions", other); r.status != 200 {
			t.Fatalf("another call to the recovered target: %d %s", r.status, r.body)
		}
		if r := st.post(t, "/v1/chat/completions", rec); r.status != 200 || r.header.Get("X-Llmguard-Repeat") != "" {
			t.Errorf("the repeat after the target answered: %d repeat %q, want it run and answered", r.status, r.header.Get("X-Llmguard-Repeat"))
		}
	})
}
