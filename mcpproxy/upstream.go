package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/llmguard/llmguard/classify"
	"github.com/llmguard/llmguard/internal/version"
	"github.com/llmguard/llmguard/internal/wait"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// phase is where an upstream server's supervisor is.
type phase int

const (
	starting phase = iota // being started: calls wait for it
	up                    // serving
	down                  // skipped at once until br.openUntil, then started again
	stopped               // the proxy closed
)

// listing is what a server offers.
type listing struct {
	tools     []*mcp.Tool
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
	prompts   []*mcp.Prompt
}

// upstream is one supervised server: its session, breaker and listing.
// The supervisor goroutine owns starting and stopping it; calls read its
// state under mu.
type upstream struct {
	cfg    Upstream
	px     *Proxy
	log    *slog.Logger
	client *mcp.Client
	stderr *stderrTail

	mu       sync.Mutex
	phase    phase
	changed  chan struct{} // closed (and replaced) at every phase change
	cs       *mcp.ClientSession
	proc     *proc         // the running command of a stdio server
	conn     *cutTransport // the running session's connection
	br       breaker
	why      string // why it is down, or why it last stopped (one line)
	list     listing
	listed   bool // list holds a listing
	progress map[string]func(*mcp.ProgressNotificationParams)
	seq      uint64
	pinging  bool
	closing  string // why llmguard closed the running session ("" = it did not)
}

func newUpstream(px *Proxy, cfg Upstream) *upstream {
	u := &upstream{cfg: cfg, px: px, log: px.log.With("upstream", cfg.Name), changed: make(chan struct{}),
		br: breaker{p: cfg.Breaker}, progress: map[string]func(*mcp.ProgressNotificationParams){}}
	u.stderr = &stderrTail{log: u.log}
	relist := func() { go u.relist() }
	u.client = mcp.NewClient(&mcp.Implementation{Name: "llmguard", Version: version.Get().Short()}, &mcp.ClientOptions{
		Logger:                      u.log,
		ProgressNotificationHandler: u.onProgress,
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { relist() },
		ResourceListChangedHandler:  func(context.Context, *mcp.ResourceListChangedRequest) { relist() },
		PromptListChangedHandler:    func(context.Context, *mcp.PromptListChangedRequest) { relist() },
	})
	return u
}

// setPhase moves to ph and wakes whoever waits for a change; u.mu is held.
func (u *upstream) setPhase(ph phase) {
	u.phase = ph
	close(u.changed)
	u.changed = make(chan struct{})
}

// supervise starts the server, waits for it to stop and starts it again,
// at once after a run longer than StableAfter, after the breaker's
// cooldown otherwise (a crash loop, a server that can't start or hung),
// until ctx ends.
func (u *upstream) supervise(ctx context.Context) {
	defer func() {
		u.mu.Lock()
		u.setPhase(stopped)
		u.mu.Unlock()
	}()
	quick := 0 // runs in a row that ended before StableAfter
	for ctx.Err() == nil {
		started := time.Now()
		cs, l, err := u.start(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			until := u.fail("can't start: "+err.Error(), true)
			u.log.Warn(fmt.Sprintf("llmguard mcp: upstream %q can't start: %s; next try at %s", u.cfg.Name, err, clock(until)))
			if wait.Until(ctx, until) != nil {
				return
			}
			continue
		}
		u.ready(cs, l)
		u.log.Info("llmguard mcp: upstream ready", "tools", len(l.tools), "resources", len(l.resources)+len(l.templates), "prompts", len(l.prompts))
		u.px.refresh()
		// Close (ctx) ends the session; Wait alone would wait for the server.
		stop := context.AfterFunc(ctx, u.cut)
		werr := cs.Wait()
		stop()
		why := u.stopReason(werr)
		cs.Close()
		if ctx.Err() != nil {
			return
		}
		// One crash soon after a start is restarted at once too; a second
		// in a row is a crash loop: restarted after the breaker's cooldown.
		ran := time.Since(started)
		if ran < u.px.cfg.StableAfter {
			quick++
		} else {
			quick = 0
		}
		until := u.fail(why, quick > 1 || u.hung())
		when := "now"
		if until.After(time.Now()) {
			when = "at " + clock(until) + " (it stopped " + ran.Round(time.Millisecond).String() + " after its start)"
		}
		u.log.Warn(fmt.Sprintf("llmguard mcp: upstream %q stopped: %s; restarting %s", u.cfg.Name, why, when))
		if wait.Until(ctx, until) != nil {
			return
		}
	}
}

// start launches the server and lists what it offers, within StartTimeout.
// The error is one line: why it can't start.
func (u *upstream) start(ctx context.Context) (*mcp.ClientSession, listing, error) {
	sctx, cancel := context.WithTimeout(ctx, u.px.cfg.StartTimeout)
	defer cancel()
	t, p, err := u.transport(ctx)
	if err != nil {
		return nil, listing{}, errors.New(classify.Line(err.Error()))
	}
	ct := &cutTransport{Transport: t, ended: make(chan struct{})}
	u.mu.Lock()
	u.proc, u.conn = p, ct
	u.mu.Unlock()
	cs, err := u.client.Connect(sctx, ct, nil)
	if err == nil {
		var l listing
		if l, err = u.fetch(sctx, cs); err == nil {
			return cs, l, nil
		}
		cs.Close()
	}
	if p != nil {
		p.Close()
	}
	if sctx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("no answer to the MCP handshake within %s", u.px.cfg.StartTimeout)
	}
	return nil, listing{}, errors.New(u.describeStop(err, p))
}

// transport connects to the server: a test's Dial, a started command, or
// the Streamable HTTP endpoint.
func (u *upstream) transport(ctx context.Context) (mcp.Transport, *proc, error) {
	switch {
	case u.cfg.Dial != nil:
		t, err := u.cfg.Dial(ctx)
		return t, nil, err
	case u.cfg.Command != "":
		u.stderr.take() // each run's stderr is its own
		p, t, err := startProc(ctx, &u.cfg, u.stderr)
		return t, p, err
	}
	base := http.DefaultTransport
	if u.cfg.HTTPClient != nil && u.cfg.HTTPClient.Transport != nil {
		base = u.cfg.HTTPClient.Transport
	}
	hc := &http.Client{Transport: headerTransport{headers: u.cfg.Headers, base: base}}
	return &mcp.StreamableClientTransport{Endpoint: u.cfg.URL, HTTPClient: hc}, nil, nil
}

// headerTransport adds an HTTP server's configured headers.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(r)
}

// fetch lists the server's tools, and its resources, resource templates
// and prompts when it offers them.
func (u *upstream) fetch(ctx context.Context, cs *mcp.ClientSession) (listing, error) {
	var l listing
	caps := &mcp.ServerCapabilities{}
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil {
		caps = ir.Capabilities
	}
	var err error
	if caps.Tools != nil {
		if l.tools, err = collect(cs.Tools(ctx, nil), "tools/list"); err != nil {
			return l, err
		}
	}
	if caps.Resources != nil {
		if l.resources, err = collect(cs.Resources(ctx, nil), "resources/list"); err != nil {
			return l, err
		}
		if l.templates, err = collect(cs.ResourceTemplates(ctx, nil), "resources/templates/list"); err != nil {
			return l, err
		}
	}
	if caps.Prompts != nil {
		if l.prompts, err = collect(cs.Prompts(ctx, nil), "prompts/list"); err != nil {
			return l, err
		}
	}
	return l, nil
}

// collect gathers a paginated listing (method names it, for the error);
// on an error it returns what came before it.
func collect[T any](seq iter.Seq2[T, error], method string) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, fmt.Errorf("%s: %w", method, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// relist fetches the listing again after the server said it changed.
func (u *upstream) relist() {
	u.mu.Lock()
	cs := u.cs
	u.mu.Unlock()
	if cs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), u.px.cfg.StartTimeout)
	defer cancel()
	l, err := u.fetch(ctx, cs)
	if err != nil {
		u.log.Warn("llmguard mcp: upstream listing not refreshed", "error", classify.Line(err.Error()))
		return
	}
	u.mu.Lock()
	u.list, u.listed = l, true
	u.mu.Unlock()
	u.px.refresh()
}

// ready records a started session.
func (u *upstream) ready(cs *mcp.ClientSession, l listing) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.cs, u.list, u.listed, u.closing, u.why = cs, l, true, "", ""
	u.br.reset()
	u.setPhase(up)
}

// fail records that the server is not running (why, one line) and
// returns when to start it again: at once, or when the breaker, opened
// now, half-opens (open: a start that failed, a crash loop, a hang).
func (u *upstream) fail(why string, open bool) time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := time.Now()
	u.cs, u.proc, u.conn, u.why = nil, nil, nil, why
	if !open {
		u.setPhase(starting)
		return now
	}
	if !u.br.open || !u.br.openUntil.After(now) {
		u.br.trip(now, why)
	}
	u.setPhase(down)
	return u.br.openUntil
}

// hung reports whether llmguard closed the session because the server hung.
func (u *upstream) hung() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.closing != ""
}

// stopReason says, in one line, why a running session ended.
func (u *upstream) stopReason(err error) string {
	u.mu.Lock()
	p, closing := u.proc, u.closing
	u.mu.Unlock()
	if closing != "" {
		return closing
	}
	return u.describeStop(err, p)
}

// describeStop names how the command exited and the last meaningful line
// of its stderr (a traceback's closing line), else err.
func (u *upstream) describeStop(err error, p *proc) string {
	var status, cause string
	if p != nil {
		status = p.exitStatus(terminateAfter)
		cause = lastMeaningful(strings.Join(u.stderr.take(), "\n"))
	}
	switch {
	case status != "" && cause != "":
		return "exited (" + status + "): " + cause
	case status != "":
		if err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
			return "exited (" + status + "): " + classify.Line(err.Error())
		}
		return "exited (" + status + ")"
	case cause != "":
		return cause
	case err != nil:
		return classify.Line(classify.Redact(err.Error()))
	}
	return "the connection closed"
}

// onProgress relays an upstream progress notification to the flight that
// sent its token.
func (u *upstream) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	tok := fmt.Sprint(req.Params.ProgressToken)
	u.mu.Lock()
	fn := u.progress[tok]
	u.mu.Unlock()
	if fn != nil {
		fn(req.Params)
	}
}

// watchProgress registers fn for a new progress token, returned with the
// function that forgets it.
func (u *upstream) watchProgress(fn func(*mcp.ProgressNotificationParams)) (string, func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.seq++
	tok := fmt.Sprintf("llmguard-%s-%d", u.cfg.Name, u.seq)
	u.progress[tok] = fn
	return tok, func() {
		u.mu.Lock()
		delete(u.progress, tok)
		u.mu.Unlock()
	}
}

// checkHang pings the server after a call's deadline passed without an
// answer: a server that answers is slow at that tool; one that does not is
// hung, so the breaker opens at once and the session is closed (a stdio
// server is killed), for the supervisor to start it again after the
// cooldown. One ping at a time.
func (u *upstream) checkHang(tool string, waited time.Duration) {
	u.mu.Lock()
	cs := u.cs
	if cs == nil || u.pinging {
		u.mu.Unlock()
		return
	}
	u.pinging = true
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.pinging = false
		u.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), u.px.cfg.PingTimeout)
	defer cancel()
	if err := cs.Ping(ctx, nil); err == nil {
		return
	}
	why := fmt.Sprintf("not answering: %s got no answer in %s and a ping none in %s", tool, waited.Round(time.Millisecond), u.px.cfg.PingTimeout)
	u.mu.Lock()
	if u.cs != cs {
		u.mu.Unlock()
		return
	}
	u.closing = why
	u.br.trip(time.Now(), why)
	u.mu.Unlock()
	u.log.Warn(fmt.Sprintf("llmguard mcp: upstream %q is %s; skipped until it restarts", u.cfg.Name, why))
	u.cut()
}

// clock formats a time as a line shows it: UTC time of day.
func clock(t time.Time) string { return t.UTC().Format("15:04:05Z") }

// cut ends the running session at once: its connection is closed under it
// (the calls in flight fail) and a stdio server's process is ended.
func (u *upstream) cut() {
	u.mu.Lock()
	ct, p := u.conn, u.proc
	u.mu.Unlock()
	if ct != nil {
		ct.Cut()
	}
	if p != nil {
		go p.Close()
	}
}

// ended reports whether cs, a session a call used, is over: replaced
// already, or its connection dead (the supervisor is replacing it).
func (u *upstream) ended(cs *mcp.ClientSession) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.cs != cs || u.conn == nil || u.conn.Dead()
}
