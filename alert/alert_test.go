package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/resilience"
)

// receiver is a webhook on 127.0.0.1 that records every body.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	texts  []string
	status int
	hold   chan struct{} // when non-nil, each request waits for it to close
}

func newReceiver(t *testing.T, status int) *receiver {
	r := &receiver{status: status}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.hold != nil {
			<-r.hold
		}
		var m Message
		body, _ := io.ReadAll(req.Body)
		if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &m) != nil {
			t.Errorf("webhook got %s %q %q", req.Method, req.Header.Get("Content-Type"), body)
		}
		r.mu.Lock()
		r.texts = append(r.texts, m.Text)
		r.mu.Unlock()
		w.WriteHeader(r.status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.texts...)
}

func closeNow(n *Notifier) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n.Close(ctx)
}

// sendOne sends one message to url through a new Notifier, closes it and
// returns how many deliveries failed and what it logged.
func sendOne(t *testing.T, url string) (failed int64, logs string) {
	t.Helper()
	var b bytes.Buffer
	n, err := New(&Options{WebhookURL: url, Logger: slog.New(slog.NewTextHandler(&b, nil))})
	if err != nil {
		t.Fatal(err)
	}
	n.Send("hello")
	closeNow(n)
	_, failed, _ = n.Stats()
	return failed, b.String()
}

const secretKey = "sk-ant-api03-SECRETSECRETSECRETSECRET"

func failure(target string, class classify.Class, scope classify.Scope, msg string) resilience.Event {
	return resilience.Event{Kind: resilience.EventFailure, Target: target,
		Verdict: &classify.Verdict{Class: class, Scope: scope, Message: msg, Status: 401}}
}

func TestNotifierStateChanges(t *testing.T) {
	const tgt = "anthropic/claude-sonnet-4-5"
	authMsg := "401 authentication_error: invalid x-api-key " + secretKey
	tests := []struct {
		name   string
		events []resilience.Event
		want   []string // substrings, one per expected alert, in order
	}{
		{
			name: "key failure once per state, then recovery",
			events: []resilience.Event{
				failure(tgt, classify.Auth, classify.ScopeKey, authMsg),
				failure(tgt, classify.Auth, classify.ScopeKey, authMsg),
				failure("anthropic/claude-haiku-4-5", classify.Auth, classify.ScopeKey, authMsg),
				{Kind: resilience.EventSuccess, Target: tgt},
				{Kind: resilience.EventSuccess, Target: tgt},
				failure(tgt, classify.QuotaExhausted, classify.ScopeKey, "429 insufficient_quota: You exceeded your current quota"),
			},
			want: []string{"anthropic key was refused (authentication): 401 authentication_error: invalid x-api-key sk-ant-***",
				"anthropic key works again", "anthropic key is out of quota or credit: 429 insufficient_quota"},
		},
		{
			name: "failures that are not the key's do not alert",
			events: []resilience.Event{
				failure(tgt, classify.Overloaded, classify.ScopeModel, "529 overloaded_error: Overloaded"),
				failure(tgt, classify.RateLimited, classify.ScopeKey, "429 rate_limit_error"),
				failure(tgt, classify.InvalidRequest, classify.ScopeRequest, "400 invalid_request_error"),
				{Kind: resilience.EventSuccess, Target: tgt},
			},
		},
		{
			name: "breaker opens and closes once each",
			events: []resilience.Event{
				failure(tgt, classify.Overloaded, classify.ScopeModel, "529 overloaded_error: Overloaded"),
				{Kind: resilience.EventBreaker, Target: tgt, From: "closed", To: "open"},
				{Kind: resilience.EventBreaker, Target: tgt, From: "open", To: "half_open"},
				{Kind: resilience.EventBreaker, Target: tgt, From: "half_open", To: "open"},
				{Kind: resilience.EventBreaker, Target: tgt, From: "open", To: "half_open"},
				{Kind: resilience.EventBreaker, Target: tgt, From: "half_open", To: "closed"},
				{Kind: resilience.EventBreaker, Target: "openai/gpt-4.1", From: "half_open", To: "closed"},
			},
			want: []string{"breaker opened for anthropic/claude-sonnet-4-5: 529 overloaded_error: Overloaded",
				"breaker closed for anthropic/claude-sonnet-4-5"},
		},
		{
			name: "key breakers are told apart from target breakers",
			events: []resilience.Event{
				{Kind: resilience.EventBreaker, Target: tgt, From: "closed", To: "open", Reason: "key anthropic"},
				{Kind: resilience.EventBreaker, Target: tgt, From: "closed", To: "open"},
				{Kind: resilience.EventBreaker, Target: "anthropic/claude-haiku-4-5", From: "closed", To: "open", Reason: "key anthropic"},
			},
			want: []string{"breaker opened for key anthropic", "breaker opened for anthropic/claude-sonnet-4-5"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReceiver(t, http.StatusOK)
			n, err := New(&Options{WebhookURL: r.URL + "/services/T000/B000/XXXX", Name: "test"})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range tt.events {
				n.Event(e)
			}
			closeNow(n)
			got := r.got()
			if len(got) != len(tt.want) {
				t.Fatalf("got %d alerts, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], "[test] ") || !strings.Contains(got[i], w) {
					t.Errorf("alert %d = %q, want it to contain %q", i, got[i], w)
				}
				if strings.Contains(got[i], "SECRET") {
					t.Errorf("alert %d leaks the key: %q", i, got[i])
				}
			}
			sent, failed, dropped := n.Stats()
			if diff := cmp.Diff([3]int64{int64(len(tt.want)), 0, 0}, [3]int64{sent, failed, dropped}); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
		})
	}
}

// A failing webhook is logged (without its secret path) and counted.
func TestNotifierDeliveryFailureLogged(t *testing.T) {
	r := newReceiver(t, http.StatusInternalServerError)
	failed, logs := sendOne(t, r.URL+"/services/SECRETPATH")
	if failed != 1 {
		t.Errorf("failed = %d, want 1", failed)
	}
	if !strings.Contains(logs, "alert delivery failed") || !strings.Contains(logs, "status 500") {
		t.Errorf("log %q lacks the failure", logs)
	}
	if strings.Contains(logs, "SECRETPATH") {
		t.Errorf("log leaks the webhook path: %q", logs)
	}
}

// An unreachable webhook is logged too, without the URL's path.
func TestNotifierUnreachable(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	url := r.URL + "/hooks/SECRETPATH"
	r.Close()
	failed, logs := sendOne(t, url)
	if failed != 1 {
		t.Errorf("failed = %d, want 1", failed)
	}
	if strings.Contains(logs, "SECRETPATH") || !strings.Contains(logs, "alert delivery failed") {
		t.Errorf("log = %q", logs)
	}
}

// A stuck webhook never blocks the caller: the queue is bounded and the
// overflow is dropped and counted.
func TestNotifierNeverBlocks(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	r.hold = make(chan struct{})
	n, err := New(&Options{WebhookURL: r.URL, QueueSize: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		n.Send("alert")
	}
	_, _, dropped := n.Stats()
	if dropped < 8 || dropped > 9 {
		t.Errorf("dropped = %d, want 8 or 9 (one in flight at most, one queued)", dropped)
	}
	close(r.hold)
	closeNow(n)
	sent, _, dropped2 := n.Stats()
	if sent+dropped2 != 10 {
		t.Errorf("sent %d + dropped %d != 10", sent, dropped2)
	}
	n.Send("after close")
	if _, _, d := n.Stats(); d != dropped2+1 {
		t.Errorf("a message after Close was not dropped")
	}
}

func TestNewValidates(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "not a url", "http://"} {
		if _, err := New(&Options{WebhookURL: u}); err == nil {
			t.Errorf("New(%q) succeeded, want an error", u)
		}
	}
	if _, err := New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
}

// A registered secret without a known prefix (a Mistral or Azure key a
// provider echoed) and a token in a URL are masked in every alert.
func TestNotifierRedactsRegisteredSecrets(t *testing.T) {
	const key = "Az9Kq1Xw4Rv7Tn2Yb5Lc9Pd3Hs6Gf0Jb"
	classify.AddSecrets(key)
	r := newReceiver(t, http.StatusOK)
	n, err := New(&Options{WebhookURL: r.URL})
	if err != nil {
		t.Fatal(err)
	}
	n.Event(failure("azure/gpt-4o", classify.Auth, classify.ScopeKey, "401 invalid key "+key+` calling "https://tok_abcdef123456@x.example/v1"`))
	closeNow(n)
	got := r.got()
	if len(got) != 1 {
		t.Fatalf("alerts %q, want 1", got)
	}
	if strings.Contains(got[0], key) || strings.Contains(got[0], "tok_abcdef123456") || !strings.Contains(got[0], "invalid key ***") {
		t.Errorf("alert %q", got[0])
	}
}
