package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/resilience"
	"github.com/llmguard/llmguard/state"
)

// Defaults for Options fields left zero.
const (
	DefaultQueueSize = 64
	DefaultTimeout   = 10 * time.Second
)

// Options configures a Notifier. WebhookURL is required; every other zero
// value means the documented default.
type Options struct {
	// WebhookURL receives the alerts: a Slack incoming webhook or anything
	// that accepts the same JSON POST ({"text": "..."}).
	WebhookURL string
	// Client sends the POSTs (nil = a client with no extra settings; each
	// POST is bounded by Timeout).
	Client *http.Client
	// QueueSize bounds the alerts waiting for delivery (0 = DefaultQueueSize).
	// When the queue is full new alerts are dropped and logged, so the
	// engine never waits.
	QueueSize int
	// Timeout bounds one delivery (0 = DefaultTimeout).
	Timeout time.Duration
	// Logger receives delivery failures and drops (nil = slog.Default()).
	Logger *slog.Logger
	// Name prefixes every message (0 = "llmguard"), e.g. a host or
	// deployment name.
	Name string
}

// Message is one alert as delivered: the Slack-compatible body.
type Message struct {
	Text string `json:"text"`
}

// Notifier turns engine events into webhook alerts: a key-scope failure
// (auth, quota or billing, permission) on a provider key, the key working
// again, and every breaker opening or closing. Each is sent once per state
// change: a key that keeps failing the same way, or a breaker that reopens
// after a failed probe, alerts once. Messages are redacted (no key, no
// secret-looking token) and delivered asynchronously from a bounded queue.
//
// A Notifier is safe for concurrent use; create it with New and stop it
// with Close. Event is meant for resilience.Options.OnEvent.
type Notifier struct {
	opt    Options
	log    *slog.Logger
	client *http.Client
	queue  chan Message
	done   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	closed   bool
	keys     map[string]string // provider -> failing class ("" = fine)
	breakers map[string]string // breaker id -> last alerted state
	lastErr  map[string]string // target -> last failure line

	// failing counts providers in n.keys, so that the common success
	// event needs no lock while every key is fine.
	failing atomic.Int32

	sent, failed, dropped atomic.Int64
}

// New starts a Notifier for o.
func New(o *Options) (*Notifier, error) {
	if o == nil || o.WebhookURL == "" {
		return nil, errors.New("alert: WebhookURL is empty")
	}
	u, err := url.Parse(o.WebhookURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("alert: WebhookURL must be an http(s) URL")
	}
	n := &Notifier{opt: *o, keys: map[string]string{}, breakers: map[string]string{}, lastErr: map[string]string{}, done: make(chan struct{})}
	if n.opt.QueueSize <= 0 {
		n.opt.QueueSize = DefaultQueueSize
	}
	if n.opt.Timeout <= 0 {
		n.opt.Timeout = DefaultTimeout
	}
	if n.opt.Name == "" {
		n.opt.Name = "llmguard"
	}
	n.log = n.opt.Logger
	if n.log == nil {
		n.log = slog.Default()
	}
	n.client = n.opt.Client
	if n.client == nil {
		n.client = &http.Client{}
	}
	n.queue = make(chan Message, n.opt.QueueSize)
	n.ctx, n.cancel = context.WithCancel(context.Background())
	go n.deliver()
	return n, nil
}

// Event looks at one engine event and queues an alert when it is a state
// change worth one. It never blocks.
func (n *Notifier) Event(e resilience.Event) {
	var text string
	switch e.Kind {
	case resilience.EventFailure:
		text = n.onFailure(e)
	case resilience.EventSuccess:
		text = n.onSuccess(e)
	case resilience.EventBreaker:
		text = n.onBreaker(e)
	}
	if text != "" {
		n.Send(text)
	}
}

// keyClass reports whether a verdict says the key itself is unusable, and
// the state to remember for it.
func keyClass(v *classify.Verdict) (string, bool) {
	if v == nil || v.Scope != classify.ScopeKey {
		return "", false
	}
	switch v.Class {
	case classify.Auth, classify.QuotaExhausted, classify.Permission:
		return string(v.Class), true
	}
	return "", false
}

func provOf(target string) string {
	p, _, _ := strings.Cut(target, "/")
	return p
}

func (n *Notifier) onFailure(e resilience.Event) string {
	v := e.Verdict
	if v == nil {
		return ""
	}
	prov := provOf(e.Target)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lastErr[e.Target] = v.Message
	class, ok := keyClass(v)
	if !ok || n.keys[prov] == class {
		return ""
	}
	if n.keys[prov] == "" {
		n.failing.Add(1)
	}
	n.keys[prov] = class
	what := map[string]string{"auth": "was refused (authentication)", "quota_exhausted": "is out of quota or credit",
		"permission": "lacks permission"}[class]
	s := fmt.Sprintf(":rotating_light: %s key %s: %s", prov, what, v.Message)
	if a := v.Advice(); a != "" {
		s += " → " + a
	}
	return s
}

func (n *Notifier) onSuccess(e resilience.Event) string {
	if e.Target == "" || e.Target == "static" || n.failing.Load() == 0 {
		return ""
	}
	prov := provOf(e.Target)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.keys[prov] == "" {
		return ""
	}
	delete(n.keys, prov)
	n.failing.Add(-1)
	return fmt.Sprintf(":white_check_mark: %s key works again (%s answered)", prov, e.Target)
}

func (n *Notifier) onBreaker(e resilience.Event) string {
	if e.To != state.Open && e.To != state.Closed {
		return "" // half-open is a step, not news
	}
	id, label := "target "+e.Target, e.Target
	if strings.HasPrefix(e.Reason, "key ") {
		id, label = e.Reason, e.Reason
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	last, seen := n.breakers[id]
	if !seen {
		last = state.Closed
	}
	if last == e.To {
		return ""
	}
	n.breakers[id] = e.To
	if e.To == state.Open {
		s := fmt.Sprintf(":red_circle: breaker opened for %s", label)
		if m := n.lastErr[e.Target]; m != "" {
			s += ": " + m
		}
		return s
	}
	return fmt.Sprintf(":large_green_circle: breaker closed for %s: it answers again", label)
}

// Send queues a message (redacted, prefixed with Options.Name). It never
// blocks: when the queue is full or the Notifier closed, the message is
// dropped and logged.
func (n *Notifier) Send(text string) {
	m := Message{Text: "[" + n.opt.Name + "] " + classify.Redact(text)}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		n.dropped.Add(1)
		return
	}
	select {
	case n.queue <- m:
	default:
		n.dropped.Add(1)
		n.log.Warn("llmguard: alert dropped, delivery queue full", "queue", n.opt.QueueSize)
	}
}

func (n *Notifier) deliver() {
	defer close(n.done)
	for m := range n.queue {
		if err := n.post(m); err != nil {
			n.failed.Add(1)
			n.log.Warn("llmguard: alert delivery failed", "err", classify.Redact(err.Error()))
			continue
		}
		n.sent.Add(1)
	}
}

func (n *Notifier) post(m Message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(n.ctx, n.opt.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.opt.WebhookURL, bytes.NewReader(body))
	if err != nil {
		return errors.New("building the request failed")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.client.Do(req)
	if err != nil {
		// *url.Error repeats the URL, which for Slack is the secret.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("webhook %s: %w", n.host(), err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("webhook %s: status %d", n.host(), resp.StatusCode)
	}
	return nil
}

// host names the webhook without its path (Slack's path is the secret).
func (n *Notifier) host() string {
	u, err := url.Parse(n.opt.WebhookURL)
	if err != nil {
		return "(invalid URL)"
	}
	return u.Host
}

// Stats reports alerts delivered, failed and dropped so far.
func (n *Notifier) Stats() (sent, failed, dropped int64) {
	return n.sent.Load(), n.failed.Load(), n.dropped.Load()
}

// Close stops accepting alerts and waits for the queued ones to be
// delivered, at most until ctx is done; then in-flight deliveries are
// cancelled. It is idempotent.
func (n *Notifier) Close(ctx context.Context) {
	n.mu.Lock()
	if !n.closed {
		n.closed = true
		close(n.queue)
	}
	n.mu.Unlock()
	select {
	case <-n.done:
	case <-ctx.Done():
		n.cancel()
		<-n.done
	}
	n.cancel()
}
