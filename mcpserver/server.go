package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/mcpcall"
	"github.com/llmguard/llmguard/resilience"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// New returns an MCP server offering summarize, ask, chat, decode_error and
// llm_status. cfg may be nil (see Config for the defaults). The server is
// safe for concurrent use and may serve many sessions (stdio, in-memory or
// Streamable HTTP).
func New(cfg *Config) *mcp.Server {
	s := newServer(cfg)
	return s.mcp
}

// server holds the tools' shared state.
type server struct {
	cfg Config
	log *slog.Logger
	mcp *mcp.Server
	// calls makes identical LLM calls share one upstream call and, for
	// the route's cache TTL, its result.
	calls *mcpcall.Group[*resilience.Result, resilience.Event]

	mu       sync.Mutex
	failures []failureLine // ring of recent failures, oldest first
}

type failureLine struct {
	Time time.Time
	Tool string
	Line string
}

func newServer(cfg *Config) *server {
	c := cfg.withDefaults()
	s := &server{cfg: c, log: c.Logger, calls: mcpcall.NewGroup[*resilience.Result, resilience.Event](&mcpcall.GroupOptions[*resilience.Result]{
		Store:  mcpcall.NewCache[*resilience.Result](c.CacheEntries),
		TTL:    c.CacheTTL,
		Keep:   func(r *resilience.Result) bool { return r != nil && !r.Static },
		Logger: c.Logger,
	})}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: c.Name, Title: "llmguard", Version: c.Version}, &mcp.ServerOptions{
		Logger:       c.Logger,
		Instructions: instructions,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	s.addTools()
	return s
}

const instructions = "llmguard's tools call an LLM through retries, fallbacks and circuit breakers. " +
	"A failed call returns one line saying what failed and what to do; do not retry a failure whose line says to fix something first."

// toolHandler wraps h as the MCP handler of tool name: it sets the tool
// deadline, puts the session in the context (for the mcp/sampling target),
// turns a panic into one error line and records failures for llm_status.
func toolHandler[In, Out any](s *server, name string, h func(ctx context.Context, req *mcp.CallToolRequest, in In) (Out, error)) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("mcp tool panicked", "tool", name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				var zero Out
				out, err = zero, panicError(name, p)
			}
			if err != nil {
				line := classify.Line(classify.Redact(err.Error()))
				err = lineError(line)
				s.recordFailure(name, line)
				s.log.Info("mcp tool failed", "tool", name, "error", line, "duration", time.Since(start))
			} else {
				attrs := []any{"tool", name, "duration", time.Since(start)}
				if a, ok := any(out).(Answer); ok {
					attrs = append(attrs, "model", a.Model, "cost_usd", a.CostUSD, "wasted_usd", a.WastedUSD)
				}
				s.log.Debug("mcp tool answered", attrs...)
			}
		}()
		ctx, cancel := context.WithTimeout(ctx, s.cfg.ToolTimeout)
		defer cancel()
		if req != nil && req.Session != nil {
			ctx = withSession(ctx, req.Session)
		}
		out, err = h(ctx, req, in)
		if in, ok := err.(inputNeeded); ok {
			// The tool needs the client's input first (sampling): no
			// content, only the input request.
			var zero Out
			return in.res, zero, nil
		}
		if t, ok := any(out).(texter); ok && err == nil {
			res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t.text()}}}
		}
		return res, out, err
	}
}

// inputNeeded is returned by a tool that needs the client's input (a
// sampling request) before it can answer.
type inputNeeded struct{ res *mcp.CallToolResult }

func (inputNeeded) Error() string { return "input needed" }

// texter is an output whose text content is not its JSON.
type texter interface{ text() string }

func (s *server) recordFailure(tool, line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, failureLine{Time: s.cfg.Now(), Tool: tool, Line: line})
	if n := len(s.failures) - s.cfg.RecentFailures; n > 0 {
		s.failures = append(s.failures[:0:0], s.failures[n:]...)
	}
}

func (s *server) recentFailures() []failureLine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]failureLine(nil), s.failures...)
}

type sessionKey struct{}

func withSession(ctx context.Context, ss *mcp.ServerSession) context.Context {
	return context.WithValue(ctx, sessionKey{}, ss)
}

// SessionFrom returns the MCP session of the tool call running in ctx, or
// nil outside a tool call.
func SessionFrom(ctx context.Context) *mcp.ServerSession {
	ss, _ := ctx.Value(sessionKey{}).(*mcp.ServerSession)
	return ss
}
