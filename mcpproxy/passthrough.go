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
	replaceAll(p.resources, res,
		func(a, b *exposedResource) bool { return a.u == b.u && sameJSON(a.res, b.res) },
		p.srv.RemoveResources,
		func(_ string, er *exposedResource) { p.srv.AddResource(er.res, p.readHandler(er.u)) })
	replaceAll(p.templates, tmpl,
		func(a, b *exposedTemplate) bool { return a.u == b.u && sameJSON(a.tmpl, b.tmpl) },
		p.srv.RemoveResourceTemplates,
		func(_ string, et *exposedTemplate) { p.srv.AddResourceTemplate(et.tmpl, p.readHandler(et.u)) })
}

// replaceAll makes have hold want: entries that went or changed (same
// says whether two are alike) are dropped through remove in one call, new
// ones added through add.
func replaceAll[V any](have, want map[string]V, same func(a, b V) bool, remove func(...string), add func(string, V)) {
	var gone []string
	for k, v := range have {
		if w, ok := want[k]; !ok || !same(w, v) {
			gone = append(gone, k)
			delete(have, k)
		}
	}
	if len(gone) > 0 {
		remove(gone...)
	}
	for k, v := range want {
		if _, ok := have[k]; !ok {
			add(k, v)
			have[k] = v
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
