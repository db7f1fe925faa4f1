package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/resilience"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progress turns engine events into MCP progress notifications for a client
// that sent a progressToken. event never blocks the engine: notifications are
// queued (dropping when the queue is full) and sent in order by one
// goroutine; close flushes the queue before the tool result goes out.
type progress struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any
	now   func() time.Time
	log   *slog.Logger
	q     chan string
	done  chan struct{}
}

func newProgress(ctx context.Context, req *mcp.CallToolRequest, now func() time.Time, log *slog.Logger) *progress {
	p := &progress{ctx: ctx, now: now, log: log}
	if req == nil || req.Session == nil || req.Params == nil {
		return p
	}
	tok := req.Params.GetProgressToken()
	if tok == nil {
		return p
	}
	p.ss, p.token = req.Session, tok
	p.q = make(chan string, 64)
	p.done = make(chan struct{})
	go p.send()
	return p
}

func (p *progress) send() {
	defer close(p.done)
	n := 0
	for msg := range p.q {
		n++
		err := p.ss.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{
			ProgressToken: p.token, Progress: float64(n), Message: msg})
		if err != nil {
			p.log.Debug("mcp progress notification not sent", "error", err)
		}
	}
}

// event is the engine's Call.OnEvent.
func (p *progress) event(ev resilience.Event) {
	if p.q == nil {
		return
	}
	msg := progressMessage(ev)
	if msg == "" {
		return
	}
	select {
	case p.q <- msg:
	default: // a client that can't keep up loses progress, never the answer
	}
}

func (p *progress) close() {
	if p.q == nil {
		return
	}
	close(p.q)
	<-p.done
}

// progressMessage is the line an agent sees while the engine works, e.g.
// "anthropic/claude-x attempt 2/5: 529 overloaded_error; retrying in 3.2s" or
// "anthropic/claude-x failed (529 overloaded_error: Overloaded); falling
// back to openai/gpt-x". "" means no notification.
func progressMessage(ev resilience.Event) string {
	what := ""
	if v := ev.Verdict; v != nil {
		what = v.ProviderType
		if v.Status > 0 {
			what = fmt.Sprintf("%d %s", v.Status, v.ProviderType)
		}
		if what == "" {
			what = string(v.Class)
		}
	}
	switch ev.Kind {
	case resilience.EventRetry:
		max := "?"
		if ev.MaxAttempts > 0 {
			max = fmt.Sprint(ev.MaxAttempts)
		}
		return fmt.Sprintf("%s attempt %d/%s: %s; retrying in %s", ev.Target, ev.Attempt, max, what, ev.Wait.Round(100*time.Millisecond))
	case resilience.EventFallback:
		// Target is where the call goes; From the target that failed.
		from := ev.From
		if from == "" {
			from = "the previous target"
		}
		if v := ev.Verdict; v != nil {
			msg := v.Message
			if msg == "" {
				msg = what
			}
			return fmt.Sprintf("%s failed (%s); falling back to %s", from, classify.Line(msg), ev.Target)
		}
		if ev.Reason != "" {
			return fmt.Sprintf("%s: %s; also trying %s", from, ev.Reason, ev.Target)
		}
		return fmt.Sprintf("falling back from %s to %s", from, ev.Target)
	case resilience.EventSkip:
		return fmt.Sprintf("skipping %s: %s", ev.Target, ev.Reason)
	}
	return ""
}
