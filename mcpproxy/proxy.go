package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/llmguard/llmguard/internal/mcpcall"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Proxy re-exposes the tools, resources and prompts of upstream MCP
// servers on an *mcp.Server, each call guarded: an idempotency key, a
// deadline, retries only where the tool's annotations make them safe,
// breakers per server, progress, and one-line failures. Create one with
// New, attach it with Start, stop it with Close. Safe for concurrent use.
type Proxy struct {
	cfg   Config
	log   *slog.Logger
	ups   []*upstream
	calls *mcpcall.Group[*outcome, string]

	randMu sync.Mutex
	rand   *rand.Rand

	mu        sync.Mutex
	srv       *mcp.Server
	tools     map[string]*exposedTool     // by exposed name
	resources map[string]*exposedResource // by URI
	templates map[string]*exposedTemplate // by URI template
	prompts   map[string]*exposedPrompt   // by exposed name
	reserved  []string                    // tool names proxied tools never take
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// exposedTool is an upstream tool as the proxy offers it.
type exposedTool struct {
	name    string // as exposed
	u       *upstream
	tool    *mcp.Tool // as the server lists it
	safe    bool      // may be retried and hedged
	timeout time.Duration
	runFor  time.Duration
}

// New returns a Proxy of cfg's upstreams; it fails on a config problem
// (each one line naming the server and field).
func New(cfg *Config) (*Proxy, error) {
	c := cfg.withDefaults()
	p := &Proxy{cfg: c, log: c.Logger, rand: c.Rand,
		tools: map[string]*exposedTool{}, resources: map[string]*exposedResource{}, templates: map[string]*exposedTemplate{}, prompts: map[string]*exposedPrompt{}}
	var errs []error
	seen := map[string]bool{}
	for _, u := range c.Upstreams {
		if err := u.Validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[u.Name] {
			errs = append(errs, fmt.Errorf("upstream %q is listed twice", u.Name))
			continue
		}
		seen[u.Name] = true
		p.ups = append(p.ups, newUpstream(p, u.withDefaults(&c)))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var store mcpcall.Store[*outcome] = mcpcall.NewCache[*outcome](c.CacheEntries)
	if c.Results != nil {
		store = &sharedStore{local: mcpcall.NewCache[*outcome](c.CacheEntries), results: c.Results}
	}
	p.calls = mcpcall.NewGroup[*outcome, string](&mcpcall.GroupOptions[*outcome]{
		Store:  store,
		TTL:    c.CacheTTL,
		Keep:   func(o *outcome) bool { return o.keep },
		Logger: c.Logger,
	})
	return p, nil
}

// Start supervises every upstream server until ctx ends or Close, and
// offers what they list on srv, updating it as servers come and go. It
// waits up to Config.StartTimeout for each server's first start (a server
// still starting then adds its tools when it is up; one that can't start
// says so in one log line and is retried). Call it once.
func (p *Proxy) Start(ctx context.Context, srv *mcp.Server) {
	ctx, cancel := context.WithCancel(ctx)
	own := serverTools(ctx, srv, p.log)
	p.mu.Lock()
	p.srv, p.cancel = srv, cancel
	p.reserved = append(slices.Clone(p.cfg.Reserved), own...)
	p.mu.Unlock()
	for _, u := range p.ups {
		p.wg.Go(func() { u.supervise(ctx) })
	}
	deadline := time.NewTimer(p.cfg.StartTimeout)
	defer deadline.Stop()
	for _, u := range p.ups {
		for {
			u.mu.Lock()
			ph, ch := u.phase, u.changed
			started := u.phase != starting || u.why != ""
			u.mu.Unlock()
			if started || ph == stopped {
				break
			}
			select {
			case <-ch:
				continue
			case <-deadline.C:
				return
			case <-ctx.Done():
				return
			}
		}
	}
	p.refresh()
}

// serverTools lists the tools srv offers, through an in-memory session.
func serverTools(ctx context.Context, srv *mcp.Server, log *slog.Logger) []string {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		log.Warn("llmguard mcp: the server's own tools not listed", "error", err)
		return nil
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "llmguard-proxy", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Warn("llmguard mcp: the server's own tools not listed", "error", err)
		return nil
	}
	defer cs.Close()
	var names []string
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			break
		}
		names = append(names, t.Name)
	}
	return names
}

// Close stops every upstream server (a stdio server gets its stdin closed,
// then is killed) and waits for their supervisors.
func (p *Proxy) Close() error {
	p.mu.Lock()
	cancel := p.cancel
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	p.wg.Wait()
	return nil
}

// Names returns the exposed tool names, sorted.
func (p *Proxy) Names() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for n := range p.tools {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// refresh makes srv offer what the upstreams list now: a tool keeps its
// name unless another server, or a reserved name, has it too (or its server
// says prefix: always), then it is "server__tool". Tools of a server that
// went down stay listed: a call says why it can't run.
func (p *Proxy) refresh() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.srv == nil {
		return
	}
	type entry struct {
		u *upstream
		l listing
	}
	var all []entry
	count := map[string]int{}
	pcount := map[string]int{}
	for _, u := range p.ups {
		u.mu.Lock()
		l, ok := u.list, u.listed
		u.mu.Unlock()
		if !ok {
			continue
		}
		all = append(all, entry{u, l})
		for _, t := range l.tools {
			count[t.Name]++
		}
		for _, pr := range l.prompts {
			pcount[pr.Name]++
		}
	}
	for _, r := range p.reserved {
		count[r]++
	}
	tools := map[string]*exposedTool{}
	prompts := map[string]*exposedPrompt{}
	resources := map[string]*exposedResource{}
	templates := map[string]*exposedTemplate{}
	for _, e := range all {
		for _, t := range e.l.tools {
			name := t.Name
			if e.u.cfg.Prefix == "always" || count[name] > 1 {
				name = e.u.cfg.Name + "__" + t.Name
			}
			tools[name] = p.expose(e.u, t, name)
		}
		for _, pr := range e.l.prompts {
			name := pr.Name
			if e.u.cfg.Prefix == "always" || pcount[name] > 1 {
				name = e.u.cfg.Name + "__" + pr.Name
			}
			prompts[name] = &exposedPrompt{name: name, u: e.u, prompt: pr}
		}
		for _, r := range e.l.resources {
			if _, dup := resources[r.URI]; !dup {
				resources[r.URI] = &exposedResource{u: e.u, res: r}
			}
		}
		for _, r := range e.l.templates {
			if _, dup := templates[r.URITemplate]; !dup {
				templates[r.URITemplate] = &exposedTemplate{u: e.u, tmpl: r}
			}
		}
	}
	p.applyTools(tools)
	p.applyPrompts(prompts)
	p.applyResources(resources, templates)
}

// expose builds the exposedTool of u's tool t under name.
func (p *Proxy) expose(u *upstream, t *mcp.Tool, name string) *exposedTool {
	et := &exposedTool{name: name, u: u, tool: t, timeout: u.cfg.ToolTimeout}
	pol := u.cfg.Tools[t.Name]
	if pol.Timeout > 0 {
		et.timeout = pol.Timeout
	}
	et.runFor = max(u.cfg.RunFor, et.timeout)
	switch {
	case pol.Idempotent != nil:
		et.safe = *pol.Idempotent
	case t.Annotations != nil:
		et.safe = t.Annotations.ReadOnlyHint || t.Annotations.IdempotentHint
	}
	return et
}

// applyTools replaces the server's proxied tools with want; p.mu is held.
// A tool listed as before keeps its entry (no list_changed for a restart);
// one that changed is replaced in place, so a call never finds its name
// missing while its server restarts.
func (p *Proxy) applyTools(want map[string]*exposedTool) {
	var gone []string
	for name := range p.tools {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		p.srv.RemoveTools(gone...)
		for _, n := range gone {
			delete(p.tools, n)
		}
	}
	for name, et := range want {
		if cur, ok := p.tools[name]; ok && sameTool(cur, et) {
			p.tools[name] = et
			continue
		}
		t := *et.tool
		t.Name = name
		if err := addTool(p.srv, &t, p.handler(name)); err != nil {
			et.u.log.Warn(fmt.Sprintf("llmguard mcp: upstream %q tool %q not offered: %v", et.u.cfg.Name, et.tool.Name, err))
			continue
		}
		p.tools[name] = et
	}
}

// sameTool reports whether a and b offer the same tool the same way.
func sameTool(a, b *exposedTool) bool {
	if a.u != b.u || a.safe != b.safe || a.timeout != b.timeout {
		return false
	}
	return sameJSON(a.tool, b.tool)
}

// sameJSON reports whether a and b encode to the same JSON (two listings
// of one thing).
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// addTool adds t, turning the SDK's panic on a schema it refuses into an error.
func addTool(srv *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	srv.AddTool(t, h)
	return nil
}
