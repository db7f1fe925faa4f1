// Package mcpserver is llmguard's MCP edge: an MCP server (built on the
// official Go SDK) whose LLM-backed tools fail politely.
//
// It offers five tools: summarize, ask and chat run a call over a route of
// the resilience engine; decode_error runs the classifier on a pasted
// failure; llm_status reports targets, breakers and recent failures. Every
// failure is an isError tool result of exactly one line (status, provider
// type, message, request id and what to do); a panic in a handler becomes
// such a line too. While the engine waits between attempts, a client that
// sent a progressToken receives progress notifications. Identical calls
// (tool name plus canonical JSON arguments, SHA-256) share one upstream call
// and, for the route's cache TTL, its answer; a call that is cancelled, or
// whose client goes away, aborts its upstream request unless another
// identical call still waits for it.
//
// A route may end with the target "mcp/sampling": [SamplingAdapter] answers
// it with the connected client's own model, through a sampling input
// request (sampling/createMessage for clients before protocol 2026-07-28).
//
// [New] returns an *mcp.Server for any transport: stdio, the SDK's
// in-memory transports, or Streamable HTTP through [HTTPHandler] (Origin
// check against DNS rebinding, optional bearer token).
//
// Typical use:
//
//	opts := cfg.EngineOptions()
//	opts.Adapters = adapters
//	eng, _ := resilience.New(opts)
//	srv := mcpserver.New(&mcpserver.Config{Engine: eng, Logger: stderrLogger})
//	err := srv.Run(ctx, &mcp.StdioTransport{}) // stdout carries only JSON-RPC
//
//	// or: h, err := mcpserver.HTTPHandler(srv, &mcpserver.HTTPOptions{Token: tok})
//	//     http.ListenAndServe("127.0.0.1:8765", h)
//
// Errors are mapped to the outside world in exactly one place, errors.go.
package mcpserver
