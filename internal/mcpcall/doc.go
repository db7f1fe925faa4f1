// Package mcpcall holds what both of llmguard's MCP edges do around a tool
// call: identical calls share one flight and, for a while, its stored
// result ([Group], with results in a [Store]: the in-memory [Cache] by
// default), and the caller who sent a progressToken hears what happens
// while it waits ([Progress]).
//
// mcpserver runs its LLM tools through a Group keyed by tool and canonical
// arguments; mcpproxy runs every proxied tool of an upstream MCP server
// through one keyed by tool and idempotency key, so a repeated call returns
// the first call's result instead of running the tool again.
//
//	g := mcpcall.NewGroup[*Result, string](&mcpcall.GroupOptions[*Result]{TTL: 10 * time.Minute})
//	res, cached, err := g.Do(ctx, key, nil, progress.Send, func(ctx context.Context, emit func(string)) (*Result, error) {
//		return callUpstream(ctx, emit)
//	})
//
// The Store is the one seam for shared state: mcpproxy's store over a
// state.ResultStore (Redis) shares results across replicas and, as it
// implements [Claims], the calls in flight too: a flight on one replica
// waits for the same key's flight on another.
package mcpcall
