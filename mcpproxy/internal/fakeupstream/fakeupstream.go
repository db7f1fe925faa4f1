// Package fakeupstream is the fake upstream MCP server of mcpproxy's
// tests, in-process (New, over any transport) and as a binary
// (fake-mcp-server, stdio). It counts every execution of its tools and
// misbehaves on request: tools that hang, fail with a traceback, crash the
// server, freeze it (no answer to anything, pings included), or crash
// during their first executions.
//
// Tools: echo (read-only), lookup (read-only; crash_first: crash during
// the first N executions), charge (not idempotent; sleep_ms: take this
// long, ignoring cancellation as a real payment would), slow (read-only;
// progress notifications while it takes sleep_ms), hang (read-only; never
// answers, pings still do), fail (a Python traceback as a tool error),
// crash and freeze. A resource fake://readme and a prompt greet.
package fakeupstream

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configures a Fake. A nil *Options means defaults.
type Options struct {
	// Log, when set, is a file that gets one line per execution, the tool's
	// name: counts that survive a crash (the binary reads
	// FAKE_UPSTREAM_LOG).
	Log string
	// Crash is what crashing does (nil = os.Exit(3)); in-process, close
	// the connection.
	Crash func()
	// Name is the server's name ("" = "fake").
	Name string
}

// Fake is the fake server. Safe for concurrent use.
type Fake struct {
	Server *mcp.Server
	opts   Options

	mu     sync.Mutex
	counts map[string]int
	frozen chan struct{} // closed = not frozen; nil never
}

// New returns a Fake with its tools, resource and prompt.
func New(o *Options) *Fake {
	f := &Fake{counts: map[string]int{}}
	if o != nil {
		f.opts = *o
	}
	if f.opts.Crash == nil {
		f.opts.Crash = func() { os.Exit(3) }
	}
	if f.opts.Name == "" {
		f.opts.Name = "fake"
	}
	f.Server = mcp.NewServer(&mcp.Implementation{Name: f.opts.Name, Version: "1.0.0"}, nil)
	f.Server.AddReceivingMiddleware(f.freezer)
	f.addTools()
	f.Server.AddResource(&mcp.Resource{URI: "fake://readme", Name: "readme", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "the fake upstream's readme"}}}, nil
		})
	f.Server.AddPrompt(&mcp.Prompt{Name: "greet", Description: "greets someone", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"] + "!"}}}}, nil
		})
	return f
}

// Executions returns how many times tool ran: from the Log when set (every
// run of the server), else in this process.
func (f *Fake) Executions(tool string) int {
	if f.opts.Log != "" {
		return CountLog(f.opts.Log, tool)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[tool]
}

// CountLog counts tool's executions in an execution log.
func CountLog(path, tool string) int {
	file, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer file.Close()
	n := 0
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		if sc.Text() == tool {
			n++
		}
	}
	return n
}

// executed counts one execution of tool and returns the count before it.
func (f *Fake) executed(tool string) int {
	before := f.Executions(tool)
	f.mu.Lock()
	f.counts[tool]++
	f.mu.Unlock()
	if f.opts.Log != "" {
		if file, err := os.OpenFile(f.opts.Log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(file, tool)
			file.Close()
		}
	}
	return before
}

// freezer is the receiving middleware that holds every request while the
// server is frozen.
func (f *Fake) freezer(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		f.mu.Lock()
		fr := f.frozen
		f.mu.Unlock()
		if fr != nil && !strings.HasPrefix(method, "notifications/") {
			select {
			case <-fr:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return next(ctx, method, req)
	}
}

// Thaw ends a freeze.
func (f *Fake) Thaw() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.frozen != nil {
		close(f.frozen)
		f.frozen = nil
	}
}

// Args are the tools' arguments.
type Args struct {
	Text       string `json:"text,omitempty"`
	ID         string `json:"id,omitempty"`
	Amount     int    `json:"amount,omitempty"`
	SleepMS    int    `json:"sleep_ms,omitempty"`
	CrashFirst int    `json:"crash_first,omitempty"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

var schema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
	"text": {Type: "string"}, "id": {Type: "string"}, "amount": {Type: "integer"},
	"sleep_ms": {Type: "integer"}, "crash_first": {Type: "integer"},
}}

func (f *Fake) add(t *mcp.Tool, h func(ctx context.Context, req *mcp.CallToolRequest, a Args) *mcp.CallToolResult) {
	t.InputSchema = schema
	mcp.AddTool(f.Server, t, func(ctx context.Context, req *mcp.CallToolRequest, a Args) (*mcp.CallToolResult, any, error) {
		return h(ctx, req, a), nil, nil
	})
}

func (f *Fake) addTools() {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	f.add(&mcp.Tool{Name: "echo", Description: "echoes text", Annotations: ro}, func(ctx context.Context, _ *mcp.CallToolRequest, a Args) *mcp.CallToolResult {
		f.executed("echo")
		return text(a.Text)
	})
	f.add(&mcp.Tool{Name: "lookup", Description: "looks an id up", Annotations: ro}, func(ctx context.Context, _ *mcp.CallToolRequest, a Args) *mcp.CallToolResult {
		if f.executed("lookup") < a.CrashFirst {
			f.opts.Crash()
			<-ctx.Done()
			return text("crashed")
		}
		return text("found " + a.ID)
	})
	f.add(&mcp.Tool{Name: "charge", Description: "charges a card (not idempotent)",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true)}}, func(ctx context.Context, _ *mcp.CallToolRequest, a Args) *mcp.CallToolResult {
		n := f.executed("charge") + 1
		time.Sleep(time.Duration(a.SleepMS) * time.Millisecond) // a payment does not stop halfway
		return text(fmt.Sprintf("charged %d (charge #%d)", a.Amount, n))
	})
	f.add(&mcp.Tool{Name: "slow", Description: "takes sleep_ms, telling its progress", Annotations: ro}, func(ctx context.Context, req *mcp.CallToolRequest, a Args) *mcp.CallToolResult {
		f.executed("slow")
		steps := 4
		for i := 1; i <= steps; i++ {
			select {
			case <-time.After(time.Duration(a.SleepMS/steps) * time.Millisecond):
			case <-ctx.Done():
				return text("cancelled")
			}
			if tok := req.Params.GetProgressToken(); tok != nil {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(steps), Message: "step"})
			}
		}
		return text("slow done")
	})
	f.add(&mcp.Tool{Name: "hang", Description: "never answers", Annotations: ro}, func(ctx context.Context, _ *mcp.CallToolRequest, a Args) *mcp.CallToolResult {
		f.executed("hang")
		<-ctx.Done()
		return text("cancelled")
	})
	f.add(&mcp.Tool{Name: "fail", Description: "fails with a traceback"}, func(ctx context.Context, _ *mcp.CallToolRequest, a Args) *mcp.CallToolResult {
		f.executed("fail")
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: pythonTraceback}}}
	})
	f.add(&mcp.Tool{Name: "crash", Description: "crashes the server"}, func(ctx context.Context, _ *mcp.CallToolRequest, a Args) *mcp.CallToolResult {
		f.executed("crash")
		f.opts.Crash()
		<-ctx.Done()
		return text("crashed")
	})
	f.add(&mcp.Tool{Name: "freeze", Description: "stops answering anything"}, func(ctx context.Context, _ *mcp.CallToolRequest, a Args) *mcp.CallToolResult {
		f.executed("freeze")
		f.mu.Lock()
		if f.frozen == nil {
			f.frozen = make(chan struct{})
		}
		fr := f.frozen
		f.mu.Unlock()
		select {
		case <-fr:
		case <-ctx.Done():
		}
		return text("thawed")
	})
}

const pythonTraceback = `Traceback (most recent call last):
  File "/srv/tools/fail.py", line 12, in handle
    result = client.fetch(item_id)
  File "/srv/tools/client.py", line 40, in fetch
    raise LookupError(f"item {item_id} not found in catalog")
LookupError: item 42 not found in catalog`
