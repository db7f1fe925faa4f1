package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmguard/llmguard/config"
	"github.com/llmguard/llmguard/internal/pipenet"
	"github.com/llmguard/llmguard/mock"
	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/registry"
	"github.com/llmguard/llmguard/resilience"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rig is an MCP server over the real engine and adapters, talking to the
// mock over HTTP on an in-memory network (pipenet): in a synctest bubble
// its backoff takes virtual time. waits are the engine's retry waits.
type rig struct {
	mock    *mock.Server
	url     string
	arrived chan string // paths of upstream requests as they arrive
	ended   chan string // ... and as their handlers return
	waits   []time.Duration
	mu      sync.Mutex
	engine  *resilience.Engine
	cfg     *Config
}

// newRig serves route "default" over targets. Extra adapters (mcp/sampling)
// may be added.
func newRig(t testing.TB, targets []string, extra map[string]provider.Adapter, tweak func(*config.Route)) *rig {
	t.Helper()
	return newRigScenario(t, nil, targets, extra, tweak)
}

// newRigScenario is newRig with the mock running sc.
func newRigScenario(t testing.TB, sc *mock.Scenario, targets []string, extra map[string]provider.Adapter, tweak func(*config.Route)) *rig {
	t.Helper()
	r := &rig{mock: mock.New(&mock.Config{Scenario: sc}), arrived: make(chan string, 100), ended: make(chan string, 100)}
	ts := pipenet.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !strings.HasPrefix(req.URL.Path, "/_mock/") {
			r.arrived <- req.URL.Path
			defer func() { r.ended <- req.URL.Path }()
		}
		r.mock.ServeHTTP(w, req)
	}))
	t.Cleanup(func() { r.mock.Close(); ts.Close() })
	r.url = ts.URL
	route := &config.Route{}
	for _, tg := range targets {
		route.Targets = append(route.Targets, config.Target{Target: tg})
	}
	if tweak != nil {
		tweak(route)
	}
	cfg := &config.Config{
		Providers: map[string]*config.Provider{
			"anthropic": {APIKey: "sk-ant-test-0000", BaseURL: ts.URL},
			"openai":    {APIKey: "sk-test-0000", BaseURL: ts.URL + "/v1"},
		},
		Routes: map[string]*config.Route{"default": route},
	}
	adapters, err := registry.Build(cfg.ProviderSettings(), ts.Client())
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range extra {
		adapters[k] = v
	}
	eo := cfg.EngineOptions()
	eo.Adapters = adapters
	eo.Rand = rand.New(rand.NewPCG(1, 2))
	eo.Logger = slog.New(slog.DiscardHandler)
	eo.OnEvent = func(e resilience.Event) {
		if e.Kind == resilience.EventRetry {
			r.mu.Lock()
			r.waits = append(r.waits, e.Wait)
			r.mu.Unlock()
		}
	}
	r.engine, err = resilience.New(eo)
	if err != nil {
		t.Fatal(err)
	}
	r.cfg = &Config{Engine: r.engine}
	return r
}

func (r *rig) connect(t testing.TB, copts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	if r.cfg.Logger == nil {
		r.cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := New(r.cfg).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts).Connect(context.Background(), ct, sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// upstream returns the mock's generation requests.
func (r *rig) upstream() []mock.Request {
	var out []mock.Request
	for _, q := range r.mock.Requests() {
		if q.Endpoint == "generate" {
			out = append(out, q)
		}
	}
	return out
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	m, ok := res.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("structured content is %T: %v", res.StructuredContent, res.StructuredContent)
	}
	return m
}

func TestAskSuccess(t *testing.T) {
	r := newRig(t, []string{"anthropic/claude-sonnet-4-5"}, nil, nil)
	cs := r.connect(t, nil, nil)
	res := callOK(t, cs, "ask", map[string]any{"prompt": "What is llmguard?", "system": "Be brief.", "max_tokens": 50}, "")
	if text(t, res) == "" {
		t.Error("empty answer")
	}
	sc := structured(t, res)
	if sc["model"] != "anthropic/claude-sonnet-4-5" || sc["attempts"] != 1.0 || sc["fallbacks"] != 0.0 {
		t.Errorf("structured content %v: want model anthropic/claude-sonnet-4-5, 1 attempt, 0 fallbacks", sc)
	}
	if sc["input_tokens"].(float64) <= 0 || sc["output_tokens"].(float64) <= 0 {
		t.Errorf("no token counts in %v", sc)
	}
	if _, ok := sc["cost_usd"]; !ok {
		t.Errorf("no cost in %v", sc)
	}
	if n := len(r.upstream()); n != 1 {
		t.Errorf("%d upstream requests, want 1", n)
	}
}

func TestChatAndSummarize(t *testing.T) {
	r := newRig(t, []string{"openai/gpt-4.1"}, nil, nil)
	cs := r.connect(t, nil, nil)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"chat", map[string]any{"messages": []map[string]string{
			{"role": "system", "content": "Be brief."},
			{"role": "user", "content": "hello"},
			{"role": "assistant", "content": "hi"},
			{"role": "user", "content": "and now?"}}}},
		{"summarize", map[string]any{"text": "Summarize: the first attempt failed, the second worked.", "bullets": 2}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			res := callTool(t, cs, tc.tool, tc.args)
			if res.IsError {
				t.Fatalf("%s failed: %s", tc.tool, text(t, res))
			}
			if structured(t, res)["model"] != "openai/gpt-4.1" || text(t, res) == "" {
				t.Errorf("got %q %v", text(t, res), res.StructuredContent)
			}
		})
	}
}

// progressLog collects the progress notifications a client receives.
type progressLog struct {
	mu    sync.Mutex
	lines []string
	got   chan struct{}
}

func newProgressLog() *progressLog { return &progressLog{got: make(chan struct{}, 10)} }

// options are client options that record progress notifications in p.
func (p *progressLog) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		p.mu.Lock()
		p.lines = append(p.lines, req.Params.Message)
		p.mu.Unlock()
		p.got <- struct{}{}
	}}
}

// wait waits (10 seconds at most) for n notifications and returns every
// line received so far.
func (p *progressLog) wait(t *testing.T, n int) []string {
	t.Helper()
	for range n {
		select {
		case <-p.got:
		case <-time.After(10 * time.Second):
			p.mu.Lock()
			defer p.mu.Unlock()
			t.Fatalf("progress notifications missing: %q", p.lines)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

func TestOverloadBurstThenSuccessWithProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, []string{"anthropic/claude-sonnet-4-5+fault=529,529,200"}, nil, nil)
		pl := newProgressLog()
		cs := r.connect(t, pl.options(), nil)
		res := callOK(t, cs, "summarize", map[string]any{"text": "Summarize this please: it failed twice and then worked."}, "tok-1")
		if sc := structured(t, res); sc["attempts"] != 3.0 {
			t.Errorf("attempts = %v, want 3", sc["attempts"])
		}
		progress := pl.wait(t, 2)
		re := regexp.MustCompile(`^anthropic/claude-sonnet-4-5\+fault=529,529,200 attempt [23]/4: 529 overloaded_error; retrying in [0-9.]+m?s$`)
		if len(progress) != 2 {
			t.Fatalf("progress %q, want 2 notifications", progress)
		}
		for _, p := range progress {
			if !re.MatchString(p) {
				t.Errorf("progress %q does not match %s", p, re)
			}
		}
		if n := len(r.upstream()); n != 3 {
			t.Errorf("%d upstream requests, want 3", n)
		}
		if len(r.waits) != 2 {
			t.Errorf("engine waited %d times, want 2", len(r.waits))
		}
	})
}

// TestFallbackProgressNamesFailedTarget: the progress line for a fallback
// blames the target that failed, with its verdict, and names the next one.
func TestFallbackProgressNamesFailedTarget(t *testing.T) {
	r := newRig(t, []string{"anthropic/claude-sonnet-4-5+fault=529", "openai/gpt-4.1"}, nil, func(rt *config.Route) {
		rt.Retry.MaxAttempts = 1
	})
	pl := newProgressLog()
	cs := r.connect(t, pl.options(), nil)
	callOK(t, cs, "summarize", map[string]any{"text": "Summarize this please: the first target is down."}, "tok-1")
	progress := pl.wait(t, 1)
	re := regexp.MustCompile(`^anthropic/claude-sonnet-4-5\+fault=529 failed \(529 overloaded_error: Overloaded \(request-id \w+\)\); falling back to openai/gpt-4\.1$`)
	if len(progress) != 1 || !re.MatchString(progress[0]) {
		t.Errorf("progress %q, want one line matching %s", progress, re)
	}
}

func TestBadKeyOneLineAfterOneAttempt(t *testing.T) {
	r := newRig(t, []string{"anthropic/claude-sonnet-4-5+fault=bad_key"}, nil, nil)
	cs := r.connect(t, nil, nil)
	line := errorLine(t, callTool(t, cs, "ask", map[string]any{"prompt": "hello"}))
	up := r.upstream()
	if len(up) != 1 {
		t.Fatalf("%d upstream attempts, want exactly 1", len(up))
	}
	wantAll(t, line, "401", "authentication_error", "(request-id "+up[0].RequestID+")", "after 1 attempt", "fix the key in the client's env block")
	if strings.Contains(line, "sk-ant-test") {
		t.Errorf("line leaks the key: %q", line)
	}

	t.Run("llm_status shows the failure", func(t *testing.T) {
		res := callTool(t, cs, "llm_status", map[string]any{})
		if res.IsError {
			t.Fatal(text(t, res))
		}
		wantAll(t, text(t, res), "anthropic/claude-sonnet-4-5+fault=bad_key: breaker", "1 failed", "recent failures:", "ask: anthropic/claude-sonnet-4-5+fault=bad_key: 401 authentication_error")
	})
}

func TestInsufficientQuotaNotRetried(t *testing.T) {
	r := newRig(t, []string{"openai/gpt-4.1+fault=insufficient_quota"}, nil, nil)
	cs := r.connect(t, nil, nil)
	line := errorLine(t, callTool(t, cs, "ask", map[string]any{"prompt": "hello"}))
	wantAll(t, line, "429", "insufficient_quota", "add credits", "after 1 attempt")
	if n := len(r.upstream()); n != 1 {
		t.Errorf("%d upstream attempts, want 1 (quota is not retried)", n)
	}
	if len(r.waits) != 0 {
		t.Errorf("engine waited %v", r.waits)
	}
}

func TestWaitThatCannotFitFailsAtOnce(t *testing.T) {
	r := newRig(t, []string{"anthropic/claude-sonnet-4-5+fault=rate_limit:40"}, nil, nil)
	r.cfg.ToolTimeout = 5 * time.Second
	cs := r.connect(t, nil, nil)
	start := time.Now()
	line := errorLine(t, callTool(t, cs, "ask", map[string]any{"prompt": "hello"}))
	wantAll(t, line, "429", "rate_limit_error", "retry after ")
	if !regexp.MustCompile(`retry after \d\d:\d\d:\d\dZ`).MatchString(line) {
		t.Errorf("no clock time to retry at in %q", line)
	}
	if len(r.waits) != 0 || len(r.upstream()) != 1 {
		t.Errorf("waits %v, %d attempts: want no wait and 1 attempt", r.waits, len(r.upstream()))
	}
	_ = start
}

func TestCancelStopsUpstream(t *testing.T) {
	r := newRig(t, []string{"anthropic/claude-sonnet-4-5+fault=hang"}, nil, nil)
	cs := r.connect(t, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"prompt": "hello"}})
		done <- err
	}()
	select {
	case <-r.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("upstream request never arrived")
	}
	cancel() // the client sends notifications/cancelled
	if err := <-done; err == nil {
		t.Error("cancelled call returned no error")
	}
	select {
	case <-r.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("upstream request still open 10s after the cancel")
	}
	if n := len(r.upstream()); n != 1 {
		t.Errorf("%d upstream attempts, want 1", n)
	}
	// The session is still usable.
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

// grabTransport remembers the client's connection so a test can drop it
// the way a dying client process does.
type grabTransport struct {
	mcp.Transport
	conn mcp.Connection
}

func (g *grabTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := g.Transport.Connect(ctx)
	g.conn = c
	return c, err
}

func TestDisconnectStopsUpstream(t *testing.T) {
	r := newRig(t, []string{"anthropic/claude-sonnet-4-5+fault=hang"}, nil, nil)
	r.cfg.Logger = slog.New(slog.DiscardHandler)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := New(r.cfg).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := &grabTransport{Transport: ct}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), g, nil)
	if err != nil {
		t.Fatal(err)
	}
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"prompt": "hello"}})
	select {
	case <-r.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("upstream request never arrived")
	}
	g.conn.Close() // the client process dies
	select {
	case <-r.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("upstream request still open 10s after the client went away")
	}
	ss.Wait()
}

func TestIdenticalCallsShareOneUpstreamCall(t *testing.T) {
	r := newRig(t, []string{"anthropic/claude-sonnet-4-5"}, nil, nil)
	cs := r.connect(t, nil, nil)
	args := map[string]any{"prompt": "same question", "max_tokens": 20}
	first := callTool(t, cs, "ask", args)
	again := callTool(t, cs, "ask", map[string]any{"max_tokens": 20, "prompt": "same question"})
	other := callTool(t, cs, "ask", map[string]any{"prompt": "another question", "max_tokens": 20})
	for _, res := range []*mcp.CallToolResult{first, again, other} {
		if res.IsError {
			t.Fatal(text(t, res))
		}
	}
	if text(t, first) != text(t, again) {
		t.Errorf("retried call got another answer: %q vs %q", text(t, first), text(t, again))
	}
	if structured(t, again)["cached"] != true {
		t.Errorf("retried call not marked cached: %v", again.StructuredContent)
	}
	if n := len(r.upstream()); n != 2 {
		t.Errorf("%d upstream requests, want 2 (the identical call is shared)", n)
	}
}

// samplingClient answers sampling/createMessage like an MCP client's own model.
func samplingClient(calls *atomic.Int32) *mcp.ClientOptions {
	//lint:ignore SA1019 sampling is deprecated in MCP 2026-07-28 but kept for clients that still advertise it (docs/decisions.md)
	return &mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		calls.Add(1)
		last := req.Params.Messages[len(req.Params.Messages)-1].Content.(*mcp.TextContent).Text
		//lint:ignore SA1019 sampling is deprecated in MCP 2026-07-28 but kept for clients that still advertise it (docs/decisions.md)
		return &mcp.CreateMessageResult{Model: "client-llm-1", Role: "assistant",
			Content: &mcp.TextContent{Text: fmt.Sprintf("client model says: %s", last)}}, nil
	}}
}

func TestSamplingFallback(t *testing.T) {
	targets := []string{"anthropic/claude-sonnet-4-5+fault=insufficient_quota", "mcp/sampling"}
	extra := map[string]provider.Adapter{SamplingProvider: &SamplingAdapter{}}
	for _, proto := range []string{"2025-11-25", ""} { // "" = the SDK's latest (multi round-trip)
		t.Run("client with sampling answers/protocol "+proto, func(t *testing.T) {
			r := newRig(t, targets, extra, nil)
			var calls atomic.Int32
			cs := r.connect(t, samplingClient(&calls), &mcp.ClientSessionOptions{ProtocolVersion: proto})
			res := callOK(t, cs, "ask", map[string]any{"prompt": "ping"}, "")
			wantAll(t, text(t, res), "answered by the MCP client's own model (client-llm-1)", "client model says: ping")
			sc := structured(t, res)
			if sc["model"] != "mcp/client-llm-1" || sc["client_model"] != true || sc["fallbacks"] != 1.0 || sc["attempts"] != 2.0 {
				t.Errorf("structured content %v", sc)
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("%d sampling requests, want 1", n)
			}
			if n := len(r.upstream()); n != 1 {
				t.Errorf("%d upstream requests, want 1 (the retried call must not pay again)", n)
			}
		})
	}
	t.Run("client without sampling gets the provider's failure", func(t *testing.T) {
		r := newRig(t, targets, extra, nil)
		cs := r.connect(t, nil, nil)
		line := errorLine(t, callTool(t, cs, "ask", map[string]any{"prompt": "ping"}))
		wantAll(t, line, "credit balance is too low")
		if strings.Contains(line, "mcp/sampling") {
			t.Errorf("the skipped sampling target hides the real failure: %q", line)
		}
	})
	t.Run("sampling skips count against no breaker", func(t *testing.T) {
		r := newRig(t, targets, extra, nil)
		cs := r.connect(t, nil, nil)
		for i := range 7 {
			errorLine(t, callTool(t, cs, "ask", map[string]any{"prompt": fmt.Sprint("ping ", i)}))
		}
		for _, st := range r.engine.Status() {
			if st.Target == "mcp/sampling" && st.Breaker != "closed" {
				t.Errorf("mcp/sampling breaker %s after skips", st.Breaker)
			}
		}
	})
}

// A fallback's own failure does not hide why the primary was left: the one
// line names the overloaded primary too.
func TestFallbackFailureNamesEveryTarget(t *testing.T) {
	r := newRig(t, []string{"anthropic/claude-sonnet-4-5+fault=529", "openai/gpt-4.1+fault=bad_key"}, nil, func(rt *config.Route) {
		rt.Retry.MaxAttempts = 1
	})
	cs := r.connect(t, nil, nil)
	line := errorLine(t, callTool(t, cs, "ask", map[string]any{"prompt": "hello"}))
	wantAll(t, line, "openai/gpt-4.1+fault=bad_key: 401", "(also failed: anthropic/claude-sonnet-4-5+fault=529 529 overloaded_error)", "fix the key")
	if strings.Contains(line, "\n") {
		t.Errorf("not one line: %q", line)
	}
}

// TestBrokenStreamContinued: the upstream stream of a tool's call breaks
// after three tokens; the engine carries the call on (it asks the target for
// the answer whole, as Chat does for a stream that broke before the caller
// saw anything) and the agent gets the whole answer, not an error.
func TestBrokenStreamContinued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc, ok := mock.Builtin("midstream-error")
		if !ok {
			t.Fatal("no midstream-error scenario")
		}
		r := newRigScenario(t, sc, []string{"anthropic/claude-sonnet-4-5"}, nil, nil)
		cs := r.connect(t, nil, nil)
		res := callOK(t, cs, "ask", map[string]any{"prompt": "one two three four five six"}, "")
		if got, want := text(t, res), "Mock answer from claude-sonnet-4-5: one two three four five six"; got != want {
			t.Errorf("answer %q, want %q", got, want)
		}
		var kinds []string
		for _, q := range r.upstream() {
			kinds = append(kinds, fmt.Sprintf("stream=%v %s", q.Stream, q.Fault))
		}
		if want := []string{"stream=true midstream:3", "stream=false ok"}; !slices.Equal(kinds, want) {
			t.Errorf("upstream requests %q, want %q", kinds, want)
		}
		if sc := structured(t, res); sc["attempts"] != 2.0 || sc["model"] != "anthropic/claude-sonnet-4-5" {
			t.Errorf("structured content %v: want 2 attempts on anthropic/claude-sonnet-4-5", sc)
		}
	})
}

// TestBrokenStreamContinuedElsewhere: every answer of the first target
// breaks, streamed or whole; the engine moves the call to the next target
// and the agent gets its answer.
func TestBrokenStreamContinuedElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, []string{"openai/gpt-4.1+fault=midstream:3", "anthropic/claude-sonnet-4-5"}, nil, nil)
		cs := r.connect(t, nil, nil)
		res := callOK(t, cs, "ask", map[string]any{"prompt": "one two three four five six"}, "")
		if got, want := text(t, res), "Mock answer from claude-sonnet-4-5: one two three four five six"; got != want {
			t.Errorf("answer %q, want %q", got, want)
		}
		if sc := structured(t, res); sc["model"] != "anthropic/claude-sonnet-4-5" || sc["fallbacks"] != 1.0 {
			t.Errorf("structured content %v: want the answer of anthropic/claude-sonnet-4-5 after 1 fallback", sc)
		}
	})
}
