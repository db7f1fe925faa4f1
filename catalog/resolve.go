package catalog

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ResolveModel maps a model name as a client sends it (the "model" of an
// OpenAI or Anthropic request, the "route" of an MCP tool call) to what the
// engine runs, trying in order:
//
//  1. a route name: the route;
//  2. "provider/model" whose provider is configured: that target;
//  3. a bare model id that a route's target serves exactly (route "default"
//     first, then the others by name, each route's targets in order): that
//     target, so {"model":"gpt-4.1"} works in zero-config mode;
//  4. with DefaultProvider set: "DefaultProvider/name".
//
// routes maps each route name to its "provider/model" targets in effective
// order, as resilience.Engine.Routes returns them. Anything else is an
// *UnknownModelError whose one line names both ways to fix it.
func (c *Catalog) ResolveModel(name string, routes map[string][]string) (string, error) {
	if _, ok := routes[name]; ok && name != "" {
		return name, nil
	}
	if p, m, ok := strings.Cut(name, "/"); ok && p != "" && m != "" {
		if _, ok := c.Configured(p); ok {
			return name, nil
		}
	}
	if name != "" {
		for _, r := range routeOrder(routes) {
			for _, t := range routes[r] {
				if _, m, ok := strings.Cut(t, "/"); ok && m == name {
					return t, nil
				}
			}
		}
		if c != nil && c.DefaultProvider != "" {
			return c.DefaultProvider + "/" + name, nil
		}
	}
	return "", &UnknownModelError{Name: name, Routes: slices.Sorted(maps.Keys(routes)), Example: c.exampleProvider(routes)}
}

// routeOrder is "default" first, then the other route names sorted.
func routeOrder(routes map[string][]string) []string {
	names := make([]string, 0, len(routes))
	for n := range routes {
		if n != "default" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	if _, ok := routes["default"]; ok {
		names = append([]string{"default"}, names...)
	}
	return names
}

// exampleProvider is the provider an error message suggests: the first
// target's of the default route, else the first configured by name.
func (c *Catalog) exampleProvider(routes map[string][]string) string {
	if ts := routes["default"]; len(ts) > 0 {
		if p, _, ok := strings.Cut(ts[0], "/"); ok {
			return p
		}
	}
	if c != nil && len(c.Providers) > 0 {
		return slices.Min(slices.Collect(maps.Keys(c.Providers)))
	}
	return "openai"
}

// UnknownModelError is a model name that ResolveModel could not map.
type UnknownModelError struct {
	// Name is the name as sent.
	Name string
	// Routes are the route names, sorted.
	Routes []string
	// Example is the provider the message suggests in "provider/model".
	Example string
}

// Error is one line saying how to fix it, e.g.
//
//	unknown model "gpt-5": send a route name (default, fast) or provider/model (e.g. openai/gpt-5), or set default_provider in the config to send bare model names to one provider
func (e *UnknownModelError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("no model given: send a route name (%s) or provider/model", strings.Join(e.Routes, ", "))
	}
	return fmt.Sprintf("unknown model %q: send a route name (%s) or provider/model (e.g. %s/%s), or set default_provider in the config to send bare model names to one provider",
		e.Name, strings.Join(e.Routes, ", "), e.Example, e.Name)
}
