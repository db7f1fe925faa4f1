package mcpcall

import (
	"context"
	"log/slog"
	"math"
	"time"

	"github.com/llmguard/llmguard/internal/wait"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressQueue bounds the notifications waiting to be sent to one caller.
const progressQueue = 64

// Progress sends progress notifications to the caller of one tool call
// that sent a progressToken; for any other call it does nothing. Send never
// blocks: messages are queued (dropped when the queue is full: a client
// that can't keep up loses progress, never the answer) and sent in order
// by one goroutine, numbered 1, 2, 3… (each notification's progress
// increases, as the protocol requires), or with Step as done of total.
// Close flushes the queue before the tool result goes out. Send is safe for concurrent use; Close is called
// once, after the last Send.
type Progress struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any
	log   *slog.Logger
	q     chan note
	done  chan struct{}
}

// note is one queued notification: its message, and how far of total it
// is (total 0: the count of notifications so far).
type note struct {
	msg         string
	done, total float64
}

// NewProgress returns the Progress of the tool call req (nil log =
// slog.Default()).
func NewProgress(ctx context.Context, req *mcp.CallToolRequest, log *slog.Logger) *Progress {
	if log == nil {
		log = slog.Default()
	}
	p := &Progress{ctx: ctx, log: log}
	if req == nil || req.Session == nil || req.Params == nil {
		return p
	}
	tok := req.Params.GetProgressToken()
	if tok == nil {
		return p
	}
	p.ss, p.token = req.Session, tok
	p.q = make(chan note, progressQueue)
	p.done = make(chan struct{})
	go p.send()
	return p
}

// Active reports whether the caller asked for progress notifications.
func (p *Progress) Active() bool { return p.q != nil }

func (p *Progress) send() {
	defer close(p.done)
	n, last := 0, 0.0
	for m := range p.q {
		n++
		done := float64(n)
		if m.total > 0 {
			done = m.done
			if done <= last {
				// Progress must increase: a note between two steps (a
				// pause) goes halfway to the next whole one.
				done = last + (math.Floor(last)+1-last)/2
			}
		}
		last = done
		err := p.ss.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{
			ProgressToken: p.token, Progress: done, Total: m.total, Message: m.msg})
		if err != nil {
			p.log.Debug("mcp progress notification not sent", "error", err)
		}
	}
}

// Send queues msg ("" sends nothing).
func (p *Progress) Send(msg string) { p.push(note{msg: msg}) }

// Step queues msg as done of total steps (a batch's items); a note that
// does not advance done still gets a progress above the last one.
func (p *Progress) Step(msg string, done, total int) {
	p.push(note{msg: msg, done: float64(done), total: float64(total)})
}

func (p *Progress) push(m note) {
	if p.q == nil || m.msg == "" {
		return
	}
	select {
	case p.q <- m:
	default:
	}
}

// Close sends what is queued and stops.
func (p *Progress) Close() {
	if p.q == nil {
		return
	}
	close(p.q)
	<-p.done
}

// SettleAfter is how long Settle waits after the last notification: the
// MCP TypeScript SDK (1.32) dispatches a notification a microtask after a
// response read in the same chunk, so a notification written just before
// the result is dropped as an unknown token
// (modelcontextprotocol/typescript-sdk#2580).
const SettleAfter = 20 * time.Millisecond

// Settle is Close, then, when the caller asked for progress, a wait of
// SettleAfter (cut short by ctx) so that the last notifications reach the
// client ahead of the result: for tools that send a notification right
// before they answer (one per item of a batch).
func (p *Progress) Settle(ctx context.Context) {
	if p.q == nil {
		return
	}
	p.Close()
	_ = wait.For(ctx, SettleAfter)
}
