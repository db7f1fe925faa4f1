package mcpproxy

import (
	"context"
	"fmt"

	"github.com/llmguard/llmguard/classify"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resources, resource templates and prompts pass through as the servers
// list them (a prompt renamed "server__prompt" when two servers have one of
// that name; the first server to list a URI serves it). Their calls are
// forwarded with the server's tool deadline; a server that is down or
// skipped answers a one-line JSON-RPC error.

type exposedPrompt struct {
	name   string
	u      *upstream
	prompt *mcp.Prompt
}

type exposedResource struct {
	u   *upstream
	res *mcp.Resource
}

type exposedTemplate struct {
	u    *upstream
	tmpl *mcp.ResourceTemplate
}

// applyPrompts replaces the server's proxied prompts with want; p.mu is held.
func (p *Proxy) applyPrompts(want map[string]*exposedPrompt) {
	var gone []string
	for name, ep := range p.prompts {
		if w, ok := want[name]; !ok || w.u != ep.u || !sameJSON(w.prompt, ep.prompt) {
			gone = append(gone, name)
			delete(p.prompts, name)
		}
	}
	if len(gone) > 0 {
		p.srv.RemovePrompts(gone...)
	}
	for name, ep := range want {
		if _, ok := p.prompts[name]; ok {
			continue
		}
		pr := *ep.prompt
		pr.Name = name
		p.srv.AddPrompt(&pr, p.promptHandler(ep))
		p.prompts[name] = ep
	}
}

// applyResources replaces the server's proxied resources and templates; p.mu is held.
func (p *Proxy) applyResources(res map[string]*exposedResource, tmpl map[string]*exposedTemplate) {
	var gone []string
	for uri, er := range p.resources {
		if w, ok := res[uri]; !ok || w.u != er.u || !sameJSON(w.res, er.res) {
			gone = append(gone, uri)
			delete(p.resources, uri)
		}
	}
	if len(gone) > 0 {
		p.srv.RemoveResources(gone...)
	}
	for uri, er := range res {
		if _, ok := p.resources[uri]; !ok {
			p.srv.AddResource(er.res, p.readHandler(er.u))
			p.resources[uri] = er
		}
	}
	gone = gone[:0]
	for t, et := range p.templates {
		if w, ok := tmpl[t]; !ok || w.u != et.u || !sameJSON(w.tmpl, et.tmpl) {
			gone = append(gone, t)
			delete(p.templates, t)
		}
	}
	if len(gone) > 0 {
		p.srv.RemoveResourceTemplates(gone...)
	}
	for t, et := range tmpl {
		if _, ok := p.templates[t]; !ok {
			p.srv.AddResourceTemplate(et.tmpl, p.readHandler(et.u))
			p.templates[t] = et
		}
	}
}

func (p *Proxy) readHandler(u *upstream) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		ctx, cancel := context.WithTimeout(ctx, u.cfg.ToolTimeout)
		defer cancel()
		cs, probe, err := u.admit(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", req.Params.URI, failureCause(u, err))
		}
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: req.Params.URI, Meta: hopMeta(req.Params.Meta)})
		u.record(probe, err)
		if err != nil {
			return nil, fmt.Errorf("%s: upstream %q: %s", req.Params.URI, u.cfg.Name, classify.Line(classify.Redact(err.Error())))
		}
		res.Meta = hopMeta(res.Meta)
		return res, nil
	}
}

func (p *Proxy) promptHandler(ep *exposedPrompt) mcp.PromptHandler {
	u := ep.u
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		ctx, cancel := context.WithTimeout(ctx, u.cfg.ToolTimeout)
		defer cancel()
		cs, probe, err := u.admit(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %s", u.cfg.Name, ep.prompt.Name, failureCause(u, err))
		}
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: ep.prompt.Name, Arguments: req.Params.Arguments, Meta: hopMeta(req.Params.Meta)})
		u.record(probe, err)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %s", u.cfg.Name, ep.prompt.Name, classify.Line(classify.Redact(err.Error())))
		}
		res.Meta = hopMeta(res.Meta)
		return res, nil
	}
}
