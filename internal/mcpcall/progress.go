package mcpcall

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressQueue bounds the notifications waiting to be sent to one caller.
const progressQueue = 64

// Progress sends progress notifications to the caller of one tool call
// that sent a progressToken; for any other call it does nothing. Send never
// blocks: messages are queued (dropped when the queue is full: a client
// that can't keep up loses progress, never the answer) and sent in order
// by one goroutine, numbered 1, 2, 3… (each notification's progress
// increases, as the protocol requires). Close flushes the queue before the
// tool result goes out. Send is safe for concurrent use; Close is called
// once, after the last Send.
type Progress struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any
	log   *slog.Logger
	q     chan string
	done  chan struct{}
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
	p.q = make(chan string, progressQueue)
	p.done = make(chan struct{})
	go p.send()
	return p
}

// Active reports whether the caller asked for progress notifications.
func (p *Progress) Active() bool { return p.q != nil }

func (p *Progress) send() {
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

// Send queues msg ("" sends nothing).
func (p *Progress) Send(msg string) {
	if p.q == nil || msg == "" {
		return
	}
	select {
	case p.q <- msg:
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
