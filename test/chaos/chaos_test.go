// Package chaos holds the "never worse than no gateway" chaos test: every
// built-in `llmguard mock` scenario is run twice from a fresh, seeded mock,
// once with clients calling the mock directly and once with the same
// clients calling the gateway (real adapters, engine and breakers, default
// policies) in front of it. The share of requests answered through the
// gateway must be at least the share answered directly, and at least 95%
// wherever a retry can help. Everything listens on 127.0.0.1; every phase
// is bounded in time and in request count.
package chaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/test/harness"
)

// Load: requests start at a steady rate (an open loop, so that time-based
// scenarios see traffic throughout), at most inFlight at once; each client
// sends one request, without retries of its own.
const (
	rate     = 100 // requests per second
	inFlight = 256
)

// scenario is how one built-in scenario is driven.
type scenario struct {
	// targets is the gateway route's targets; direct lists the providers
	// the direct clients take turns calling (the route's first when nil).
	targets []string
	direct  []string
	// helps: a retry (or fallback) can help, so the gateway must answer at
	// least 95%.
	helps bool
	// send is how long clients keep sending (default 2s).
	send time.Duration
	// timeout is the route's deadline (default 30s, shorter than the
	// default minute so that a phase ends soon after its last request).
	timeout time.Duration
}

// scenarios covers every built-in: a built-in missing here fails the test.
var scenarios = map[string]scenario{
	"healthy":            {targets: []string{"openai/gpt-4o"}, helps: true},
	"overload-burst":     {targets: []string{"anthropic/claude-sonnet-4-5"}, helps: true},
	"rate-limited":       {targets: []string{"openai/gpt-4o"}, helps: true},
	"flaky-network":      {targets: []string{"anthropic/claude-sonnet-4-5"}, helps: true},
	"brief-outage":       {targets: []string{"openai/gpt-4o"}, helps: true, send: 5 * time.Second},
	"quota-empty":        {targets: []string{"openai/gpt-4o"}},
	"bad-key":            {targets: []string{"anthropic/claude-sonnet-4-5"}},
	"outage":             {targets: []string{"openai/gpt-4o"}, send: time.Second, timeout: 10 * time.Second},
	"midstream-error":    {targets: []string{"anthropic/claude-sonnet-4-5"}},
	"slow":               {targets: []string{"gemini/gemini-2.5-flash"}, helps: true},
	"gemini-daily-quota": {targets: []string{"gemini/gemini-2.5-flash", "openai/gpt-4o"}, direct: []string{"gemini"}, helps: true},
	"mixed": {targets: []string{"gemini/gemini-2.5-flash", "anthropic/claude-sonnet-4-5", "openai/gpt-4o"},
		direct: []string{"gemini", "anthropic", "openai"}, helps: true},
}

// result is what one phase measured.
type result struct {
	requests, ok int
	attempts     int64 // generation requests the mock received
	elapsed      time.Duration
	why          map[string]int // failed requests by what they got
}

// top lists the commonest failures, for a failing test's message.
func (r result) top() string {
	type kv struct {
		k string
		n int
	}
	var all []kv
	for k, n := range r.why {
		all = append(all, kv{k, n})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n || all[i].n == all[j].n && all[i].k < all[j].k })
	var b strings.Builder
	for i, e := range all {
		if i == 5 {
			break
		}
		fmt.Fprintf(&b, "\n\t%4d × %s", e.n, e.k)
	}
	return b.String()
}

func (r result) share() float64 { return float64(r.ok) / float64(max(r.requests, 1)) }
func (r result) perRequest() float64 {
	return float64(r.attempts) / float64(max(r.requests, 1))
}

func TestNeverWorseThanNoGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test: a few seconds per scenario")
	}
	for _, name := range mock.BuiltinNames() {
		if _, ok := scenarios[name]; !ok {
			t.Errorf("built-in scenario %q has no chaos case: add it to scenarios", name)
		}
	}
	var mu sync.Mutex
	var lines []string
	t.Cleanup(func() {
		t.Logf("%-20s %12s %12s %14s", "scenario", "direct", "gateway", "attempts/req")
		for _, l := range lines {
			t.Log(l)
		}
	})
	for _, name := range mock.BuiltinNames() {
		sc, ok := scenarios[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			// The two phases run at once, each on its own fresh mock; the
			// scenarios one after the other, so that a burst in one (held
			// calls released when an outage ends) does not starve another.
			dp, gp := newPhase(t, name, sc, false), newPhase(t, name, sc, true)
			dur := sc.send
			if dur == 0 {
				dur = 2 * time.Second
			}
			var direct, gw result
			var wg sync.WaitGroup
			wg.Go(func() { direct = dp.run(dur) })
			wg.Go(func() { gw = gp.run(dur) })
			wg.Wait()
			mu.Lock()
			lines = append(lines, fmt.Sprintf("%-20s %11.1f%% %11.1f%% %14.2f   (%d/%d direct, %d/%d gateway, %s)",
				name, 100*direct.share(), 100*gw.share(), gw.perRequest(), direct.ok, direct.requests, gw.ok, gw.requests, gw.elapsed.Round(100*time.Millisecond)))
			mu.Unlock()
			if gw.share() < direct.share() {
				t.Errorf("gateway answered %.1f%% (%d/%d), fewer than calling the mock directly: %.1f%% (%d/%d); it failed with:%s",
					100*gw.share(), gw.ok, gw.requests, 100*direct.share(), direct.ok, direct.requests, gw.top())
			}
			if sc.helps && gw.share() < 0.95 {
				t.Errorf("gateway answered %.1f%% (%d/%d); a retry can help here, want at least 95%%; it failed with:%s",
					100*gw.share(), gw.ok, gw.requests, gw.top())
			}
		})
	}
}

const chaosConfig = `
providers:
  anthropic: {base_url: MOCK, api_key: chaos-ant-key}
  openai: {base_url: MOCK/v1, api_key: chaos-oai-key}
  gemini: {base_url: MOCK, api_key: chaos-gem-key}
routes:
  default:
    timeout: TIMEOUT
    targets: TARGETS
`

// phase is one run of a scenario on a fresh mock: send sends request i
// with text as its prompt and says whether it was answered (and if not,
// what came back).
type phase struct {
	send     func(ctx context.Context, i int, text string) (bool, string)
	attempts *atomic.Int64 // generation requests the mock received for measured requests
	// warm: run warms down (through the gateway; a direct client does not
	// retry, so its calls meet no retry budget).
	warm bool
}

// newPhase starts a fresh mock for the built-in scenario name and, when via
// is set, the gateway in front of it.
func newPhase(t *testing.T, name string, sc scenario, via bool) *phase {
	t.Helper()
	msc, ok := mock.Builtin(name)
	if !ok {
		t.Fatalf("no built-in %q", name)
	}
	attempts := new(atomic.Int64)
	ms := mock.New(&mock.Config{Scenario: msc, HangLimit: 20 * time.Second})
	mts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && !warmDown(r) {
			attempts.Add(1)
		}
		ms.ServeHTTP(w, r)
	}))
	t.Cleanup(mts.Close)
	t.Cleanup(ms.Close)
	client := &http.Client{Timeout: time.Minute}
	var send func(ctx context.Context, i int, text string) (bool, string)
	if via {
		base := startGateway(t, mts.URL, sc)
		send = func(ctx context.Context, i int, text string) (bool, string) {
			return sendGateway(ctx, client, base, i, text)
		}
	} else {
		direct := sc.direct
		if direct == nil {
			direct = []string{strings.SplitN(sc.targets[0], "/", 2)[0]}
		}
		models := map[string]string{}
		for _, tg := range sc.targets {
			p, m, _ := strings.Cut(tg, "/")
			models[p] = m
		}
		send = func(ctx context.Context, i int, text string) (bool, string) {
			p := direct[i%len(direct)]
			return sendDirect(ctx, client, mts.URL, p, models[p], i, text)
		}
	}
	return &phase{send: send, attempts: attempts, warm: via}
}

// run sends rate requests a second for dur, waits for every answer and
// returns what it measured.
//
// When ph.warm, it goes on sending at the same rate until the last of them
// is answered, requests it does not count (a warm-down, cancelled then): the
// retries of the measured requests meet the traffic they would meet in
// service, not a drain in which every call left in flight is a retry (the
// retry budget is a share of the calls in flight, so such a drain is
// refused retries that steady traffic gets; a loaded machine makes the
// drain long).
func (ph *phase) run(dur time.Duration) result {
	n := int(dur.Seconds() * rate)
	slots := make(chan struct{}, inFlight)
	var answered atomic.Int64
	var mu sync.Mutex
	why := map[string]int{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var measured, warm sync.WaitGroup
	start := time.Now()
	due := func(i int) time.Time { return start.Add(time.Duration(i) * time.Second / rate) }
	for i := range n {
		// Pace the load generator (not a backoff): request i starts at i/rate.
		time.Sleep(time.Until(due(i)))
		slots <- struct{}{}
		measured.Go(func() {
			defer func() { <-slots }()
			ok, what := ph.send(ctx, i, prompt(i))
			if ok {
				answered.Add(1)
				return
			}
			mu.Lock()
			why[what]++
			mu.Unlock()
		})
	}
	done := make(chan struct{})
	go func() { measured.Wait(); close(done) }()
	for i := n; ph.warm && wake(done, due(i)); i++ {
		select {
		case slots <- struct{}{}:
		case <-done:
			continue
		}
		warm.Go(func() {
			defer func() { <-slots }()
			ph.send(ctx, i, warmDownPrompt(i))
		})
	}
	<-done
	elapsed := time.Since(start)
	cancel()
	warm.Wait()
	return result{requests: n, ok: int(answered.Load()), attempts: ph.attempts.Load(), elapsed: elapsed, why: why}
}

// wake waits until t and reports true, or reports false once done is
// closed.
func wake(done <-chan struct{}, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-done:
		return false
	case <-timer.C:
		return true
	}
}

// startGateway starts the gateway over the mock at mockURL with one route,
// "default", of sc's targets: default policies but sc's deadline.
func startGateway(t *testing.T, mockURL string, sc scenario) string {
	t.Helper()
	yaml := strings.ReplaceAll(chaosConfig, "MOCK", mockURL)
	yaml = strings.ReplaceAll(yaml, "TARGETS", "["+strings.Join(sc.targets, ", ")+"]")
	timeout := sc.timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	yaml = strings.ReplaceAll(yaml, "TIMEOUT", timeout.String())
	cfg, err := config.Parse("chaos.yaml", []byte(yaml), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return harness.ServeGateway(t, cfg)
}

// prompt is request i's text. Each request is a different document, as in
// the queues the scenarios model: a client that sends the same request
// again after a failure is retrying it, and the gateway holds the failure
// of a call it retried to exhaustion for such repeats (repeat_hold).
func prompt(i int) string { return fmt.Sprintf("Say hello to the chaos test please (document %d)", i) }

// warmDownTag marks the prompts of the requests run does not count.
const warmDownTag = "(warm-down request "

func warmDownPrompt(i int) string {
	return fmt.Sprintf("Say hello to the chaos test please %s%d)", warmDownTag, i)
}

// warmDown reports whether r carries a warm-down prompt (and leaves its
// body to be read again).
func warmDown(r *http.Request) bool {
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return err == nil && bytes.Contains(b, []byte(warmDownTag))
}

// sendGateway sends request i, asking text, to the gateway: OpenAI and
// Anthropic dialects in turn, every sixteenth streaming.
func sendGateway(ctx context.Context, c *http.Client, base string, i int, text string) (bool, string) {
	stream := i%16 == 15
	if i%2 == 0 {
		return post(ctx, c, base+"/v1/chat/completions", nil, openAIBody("default", stream, text), "openai", stream)
	}
	return post(ctx, c, base+"/v1/messages", nil, anthropicBody("default", stream, text), "anthropic", stream)
}

// sendDirect sends request i, asking text, straight to provider p of the
// mock, as that provider's own client would; every sixteenth streaming.
func sendDirect(ctx context.Context, c *http.Client, base, p, model string, i int, text string) (bool, string) {
	stream := i%16 == 15
	switch p {
	case "anthropic":
		return post(ctx, c, base+"/v1/messages", http.Header{"X-Api-Key": {"chaos-ant-key"}, "Anthropic-Version": {"2023-06-01"}},
			anthropicBody(model, stream, text), "anthropic", stream)
	case "openai":
		return post(ctx, c, base+"/v1/chat/completions", http.Header{"Authorization": {"Bearer chaos-oai-key"}},
			openAIBody(model, stream, text), "openai", stream)
	case "gemini":
		path := base + "/v1beta/models/" + model + ":generateContent"
		if stream {
			path = base + "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
		}
		body := `{"contents":[{"role":"user","parts":[{"text":"` + text + `"}]}]}`
		return post(ctx, c, path, http.Header{"X-Goog-Api-Key": {"chaos-gem-key"}}, body, "gemini", stream)
	}
	panic("chaos: no direct client for " + p)
}

func openAIBody(model string, stream bool, text string) string {
	return fmt.Sprintf(`{"model":%q,"stream":%t,"messages":[{"role":"user","content":%q}]}`, model, stream, text)
}

func anthropicBody(model string, stream bool, text string) string {
	return fmt.Sprintf(`{"model":%q,"max_tokens":100,"stream":%t,"messages":[{"role":"user","content":%q}]}`, model, stream, text)
}

// post sends one request and reports whether it was answered: a 200 with
// a complete answer in the dialect (a whole JSON body with text, or a
// stream that reached its end without an error event). When not, what
// says what came back instead.
func post(ctx context.Context, c *http.Client, url string, hdr http.Header, body, dialect string, stream bool) (ok bool, what string) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return false, err.Error()
	}
	req.Header = hdr.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return false, "no response"
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	kind := map[bool]string{true: "stream", false: "body"}[stream]
	switch {
	case err != nil:
		return false, fmt.Sprintf("%d, %s cut short", res.StatusCode, kind)
	case res.StatusCode != http.StatusOK:
		return false, fmt.Sprintf("%d %.160s", res.StatusCode, bytes.TrimSpace(b))
	case stream && !streamComplete(b, dialect), !stream && !answered(b, dialect):
		return false, fmt.Sprintf("200, incomplete %s", kind)
	}
	return true, ""
}

// answered reports whether b is a complete, successful answer with text.
func answered(b []byte, dialect string) bool {
	var v struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	switch dialect {
	case "openai":
		return len(v.Choices) > 0 && v.Choices[0].Message.Content != ""
	case "anthropic":
		return len(v.Content) > 0 && v.Content[0].Text != ""
	case "gemini":
		return len(v.Candidates) > 0 && len(v.Candidates[0].Content.Parts) > 0 && v.Candidates[0].Content.Parts[0].Text != ""
	}
	return false
}

// streamComplete reports whether an SSE body reached its end marker
// without an error event and carried text.
func streamComplete(b []byte, dialect string) bool {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var text, end bool
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			if line == "event: error" {
				return false
			}
			continue
		}
		switch dialect {
		case "openai":
			if data == "[DONE]" {
				end = true
				continue
			}
			if strings.Contains(data, `"error"`) {
				return false
			}
			if strings.Contains(data, `"content":"`) {
				text = true
			}
		case "anthropic":
			if strings.Contains(data, `"type":"error"`) {
				return false
			}
			if strings.Contains(data, `"text_delta"`) {
				text = true
			}
			if strings.Contains(data, `"type":"message_stop"`) {
				end = true
			}
		case "gemini":
			if strings.Contains(data, `"error"`) {
				return false
			}
			if strings.Contains(data, `"text"`) {
				text = true
			}
			if strings.Contains(data, `"finishReason":"STOP"`) {
				end = true
			}
		}
	}
	return sc.Err() == nil && text && end
}
