package mcpproxy

import (
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func toolNames(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	out := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = tool
	}
	return out
}

// TestToolsReexposed: one server's tools keep their names, schemas and
// annotations; a name two servers share (or a reserved one) is prefixed;
// resources and prompts pass through.
func TestToolsReexposed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newFake("a"), newFake("b")
		st := newStack(t, &Config{Upstreams: []Upstream{a.upstream("pay"), b.upstream("docs")}, Reserved: []string{"echo"}})
		tools := toolNames(t, st.client)
		for _, want := range []string{"pay__echo", "docs__echo", "pay__lookup", "docs__charge"} {
			if tools[want] == nil {
				t.Errorf("no tool %q in %v", want, slices.Sorted(func(yield func(string) bool) {
					for n := range tools {
						if !yield(n) {
							return
						}
					}
				}))
			}
		}
		if tl := tools["pay__lookup"]; tl == nil || tl.Annotations == nil || !tl.Annotations.ReadOnlyHint {
			t.Errorf("pay__lookup lost its annotations: %+v", tl)
		} else if s, _ := json.Marshal(tl.InputSchema); !strings.Contains(string(s), `"crash_first"`) {
			t.Errorf("pay__lookup lost its schema: %s", s)
		}
		if txt, isErr := st.call(t, context.Background(), "docs__echo", map[string]any{"text": "hi"}, nil); isErr || txt != "hi" {
			t.Errorf("docs__echo = %q (isError %v)", txt, isErr)
		}

		one := newStack(t, &Config{Upstreams: []Upstream{newFake("c").upstream("solo")}})
		if tools := toolNames(t, one.client); tools["echo"] == nil || tools["solo__echo"] != nil {
			t.Errorf("a lone server's tools should keep their names: %v", one.proxy.Names())
		}
		rr, err := one.client.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "fake://readme"})
		if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "the fake upstream's readme" {
			t.Errorf("resource: %+v, %v", rr, err)
		}
		gp, err := one.client.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
		if err != nil || len(gp.Messages) != 1 || gp.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Ada!" {
			t.Errorf("prompt: %+v, %v", gp, err)
		}
	})
}

// TestNonIdempotentRunsOnce: a tool that is not idempotent, retried by the
// client after the tool's deadline passed, runs once: the retry waits for
// the first call and gets its result, and so does a repeat within the TTL.
func TestNonIdempotentRunsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("pay")
		st := newStack(t, &Config{Upstreams: []Upstream{f.upstream("pay")}, ToolTimeout: time.Second})
		args := map[string]any{"amount": 5, "sleep_ms": 3000}
		line, isErr := st.call(t, context.Background(), "charge", args, nil)
		if !isErr || !strings.Contains(line, "pay/charge: no answer from upstream \"pay\" within this tool's 1s deadline") || !strings.Contains(line, "will not run twice") {
			t.Errorf("first call: %q (isError %v)", line, isErr)
		}
		oneLine(t, line)
		// The agent retries; the charge is still running upstream.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		for {
			txt, isErr := st.call(t, ctx, "charge", args, nil)
			if !isErr {
				if txt != "charged 5 (charge #1)" {
					t.Errorf("retry got %q", txt)
				}
				break
			}
			if time.Since(start) > 4*time.Second {
				t.Fatalf("the retry never got the first call's result: %q", txt)
			}
		}
		if txt, _ := st.call(t, context.Background(), "charge", args, nil); txt != "charged 5 (charge #1)" {
			t.Errorf("repeat within the TTL: %q", txt)
		}
		if n := f.Executions("charge"); n != 1 {
			t.Errorf("charge executed %d times, want 1", n)
		}
		// A new explicit key is a new call.
		if txt, _ := st.call(t, ctx, "charge", map[string]any{"amount": 5}, mcp.Meta{"idempotencyKey": "order-2"}); txt != "charged 5 (charge #2)" {
			t.Errorf("new key: %q", txt)
		}
		if line, isErr := st.call(t, ctx, "charge", map[string]any{"amount": 7}, mcp.Meta{"idempotencyKey": "order-2"}); !isErr || !strings.Contains(line, "was used for a call with other arguments") {
			t.Errorf("reused key, other arguments: %q", line)
		}
		if n := f.Executions("charge"); n != 2 {
			t.Errorf("charge executed %d times, want 2", n)
		}
		t.Logf("charge executions: %d (one per idempotency key)", f.Executions("charge"))
	})
}

// TestCancelledNonIdempotentIsNotRepeated: a client that cancels a call
// of a tool that is not idempotent has the cancellation passed on; the
// tool may have run, so a repeat gets one line saying so instead of a
// second run.
func TestCancelledNonIdempotentIsNotRepeated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("pay")
		st := newStack(t, &Config{Upstreams: []Upstream{f.upstream("pay")}})
		args := map[string]any{"amount": 9, "sleep_ms": 3000}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := st.client.CallTool(ctx, &mcp.CallToolParams{Name: "charge", Arguments: args})
			done <- err
		}()
		time.Sleep(time.Second)
		cancel()
		<-done
		time.Sleep(10 * time.Millisecond)
		line, isErr := st.call(t, context.Background(), "charge", args, nil)
		if !isErr || !strings.Contains(line, "cancelled while it ran") || !strings.Contains(line, "did not send it again") {
			t.Errorf("repeat after a cancel: %q", line)
		}
		oneLine(t, line)
		if n := f.Executions("charge"); n != 1 {
			t.Errorf("charge executed %d times, want 1", n)
		}
		time.Sleep(3 * time.Second) // the charge ignores the cancellation: let it end
	})
}

// TestReadOnlyRetriedThroughTransportFailure: the server crashes during a
// read-only call; llmguard waits for the restart and sends it again.
func TestReadOnlyRetriedThroughTransportFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("docs")
		st := newStack(t, &Config{Upstreams: []Upstream{f.upstream("docs")}})
		txt, isErr := st.call(t, context.Background(), "lookup", map[string]any{"id": "7", "crash_first": 1}, mcp.Meta{"progressToken": "p"})
		if isErr || txt != "found 7" {
			t.Fatalf("lookup = %q (isError %v); log:\n%s", txt, isErr, st.log)
		}
		if n := f.Executions("lookup"); n != 2 {
			t.Errorf("lookup executed %d times, want 2 (the crash, then the retry)", n)
		}
		if !slices.ContainsFunc(st.prog.all(), func(s string) bool { return strings.Contains(s, "docs/lookup attempt 1/3") }) {
			t.Errorf("no progress line for the retry: %q", st.prog.all())
		}
		if !strings.Contains(st.log.String(), `upstream \"docs\" stopped`) {
			t.Errorf("no log line for the crash:\n%s", st.log)
		}
		t.Logf("lookup executions: %d; progress %q", f.Executions("lookup"), st.prog.all())
	})
}

// TestHangingServerTripsBreaker: a server that stops answering (pings
// too) is skipped at once after the first call's deadline, with one line
// saying why, and restarted after the cooldown.
func TestHangingServerTripsBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("slowco")
		st := newStack(t, &Config{Upstreams: []Upstream{f.upstream("slowco")}, ToolTimeout: 2 * time.Second, PingTimeout: time.Second})
		line, _ := st.call(t, context.Background(), "freeze", nil, nil)
		oneLine(t, line)
		time.Sleep(1500 * time.Millisecond) // the ping's timeout
		start := time.Now()
		line, isErr := st.call(t, context.Background(), "echo", map[string]any{"text": "x"}, nil)
		if !isErr || !regexp.MustCompile(`^slowco/echo: skipped: upstream "slowco" is down \(not answering: freeze got no answer in 2s and a ping none in 1s\); it restarts then; retry after \d\d:\d\d:\d\dZ$`).MatchString(line) {
			t.Errorf("call to a hung server: %q\n%s", line, st.log)
		}
		if time.Since(start) != 0 {
			t.Errorf("the skip took %v, want at once", time.Since(start))
		}
		if n := f.Executions("echo"); n != 0 {
			t.Errorf("echo reached the hung server %d times", n)
		}
		if !strings.Contains(st.log.String(), `is not answering: freeze got no answer`) {
			t.Errorf("no log line for the hang:\n%s", st.log)
		}
		f.Thaw()
		time.Sleep(3 * time.Second) // the cooldown, then the restart
		if txt, isErr := st.call(t, context.Background(), "echo", map[string]any{"text": "back"}, nil); isErr || txt != "back" {
			t.Errorf("after the restart: %q (isError %v); log:\n%s", txt, isErr, st.log)
		}
	})
}

// TestCrashIsRestarted: a crash during a tool that is not idempotent is
// one line saying it may have run; the server is restarted and serves the
// next call; a server that can't start is skipped at once, saying why.
func TestCrashIsRestarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("box")
		st := newStack(t, &Config{Upstreams: []Upstream{f.upstream("box")}})
		line, isErr := st.call(t, context.Background(), "crash", nil, nil)
		if !isErr || !strings.Contains(line, `box/crash: upstream "box" stopped during the call`) || !strings.Contains(line, "it may have run") {
			t.Errorf("crash: %q", line)
		}
		oneLine(t, line)
		if txt, isErr := st.call(t, context.Background(), "echo", map[string]any{"text": "again"}, nil); isErr || txt != "again" {
			t.Errorf("after the restart: %q (isError %v)", txt, isErr)
		}
		if f.dials != 2 {
			t.Errorf("%d starts, want 2", f.dials)
		}
		// Now it can't start: the next crash leaves it down.
		f.mu.Lock()
		f.down = true
		f.mu.Unlock()
		// Its second crash in a row soon after a start is a crash loop: it
		// is restarted after the breaker's first cooldown (2s), and that
		// start fails.
		st.call(t, context.Background(), "crash", map[string]any{"id": "2"}, nil)
		time.Sleep(2500 * time.Millisecond)
		line, _ = st.call(t, context.Background(), "echo", map[string]any{"text": "x"}, nil)
		if !strings.Contains(line, `box/echo: skipped: upstream "box" is down (can't start: unexpected EOF)`) {
			t.Errorf("while it can't start: %q", line)
		}
		if !strings.Contains(st.log.String(), `upstream \"box\" can't start: unexpected EOF; next try at`) {
			t.Errorf("no one-line log of the failed start:\n%s", st.log)
		}
	})
}

// TestToolErrorIsOneLine: a tool's traceback becomes its last meaningful
// line, naming the server and tool.
func TestToolErrorIsOneLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newStack(t, &Config{Upstreams: []Upstream{newFake("x").upstream("inv")}})
		line, isErr := st.call(t, context.Background(), "fail", nil, nil)
		want := "inv/fail: tool error: LookupError: item 42 not found in catalog; not retried by llmguard (the tool is not idempotent)"
		if !isErr || line != want {
			t.Errorf("fail = %q, want %q", line, want)
		}
	})
}

// TestProgress: the server's progress notifications reach the client,
// and llmguard's own while it waits.
func TestProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newStack(t, &Config{Upstreams: []Upstream{newFake("x").upstream("job")}, ProgressInterval: 1500 * time.Millisecond})
		txt, _ := st.call(t, context.Background(), "slow", map[string]any{"sleep_ms": 4000}, mcp.Meta{"progressToken": "tok"})
		if txt != "slow done" {
			t.Fatalf("slow = %q", txt)
		}
		got := st.prog.all()
		var up, own int
		for _, m := range got {
			switch {
			case strings.HasPrefix(m, "job/slow: step ("):
				up++
			case strings.HasPrefix(m, "job/slow: still running"):
				own++
			}
		}
		// The server's last notification races its result (the SDK's client
		// handles notifications on another goroutine than responses): it
		// may come too late to pass on.
		if up < 3 || own != 2 {
			t.Errorf("progress %q: want 3 or 4 from the server and 2 of llmguard's", got)
		}
	})
}

// TestHedge: a slow read-only tool with hedge_after is sent a second time;
// the first answer wins.
func TestHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("x")
		u := f.upstream("job")
		u.HedgeAfter = time.Second
		st := newStack(t, &Config{Upstreams: []Upstream{u}})
		start := time.Now()
		if txt, _ := st.call(t, context.Background(), "slow", map[string]any{"sleep_ms": 2000}, nil); txt != "slow done" {
			t.Fatalf("slow = %q", txt)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("answered after %v, want the first attempt's 2s", d)
		}
		if n := f.Executions("slow"); n != 2 {
			t.Errorf("slow executed %d times, want 2 (hedged)", n)
		}
		if n := f.Executions("charge"); n != 0 {
			t.Errorf("charge: %d", n)
		}
		st.call(t, context.Background(), "charge", map[string]any{"sleep_ms": 2000}, nil)
		if n := f.Executions("charge"); n != 1 {
			t.Errorf("a tool that is not idempotent was hedged: %d executions", n)
		}
	})
}

// TestServerToolsReserved: a tool the server already offers when Start is
// called (llmguard's own) keeps its name; the upstream's tool of that name
// is prefixed.
func TestServerToolsReserved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := New(&Config{Upstreams: []Upstream{newFake("x").upstream("up")}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		srv := mcp.NewServer(&mcp.Implementation{Name: "own", Version: "1"}, nil)
		srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: &jsonschema.Schema{Type: "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "own echo"}}}, nil
		})
		p.Start(context.Background(), srv)
		defer p.Close()
		names := p.Names()
		if !slices.Contains(names, "up__echo") || slices.Contains(names, "echo") || !slices.Contains(names, "lookup") {
			t.Errorf("proxied names %v: want up__echo (echo is the server's own) and lookup", names)
		}
	})
}
