// Package gateway is llmguard's OpenAI- and Anthropic-compatible HTTP
// gateway (`llmguard serve`): POST /v1/chat/completions, POST /v1/messages,
// POST /v1/responses (OpenAI's Responses API) and GET /v1/models in front of
// the resilience engine, so existing clients (the official SDKs, the Vercel
// AI SDK, Claude Code with ANTHROPIC_BASE_URL) get retries, fallbacks and
// breakers without code changes. Every other path or method gets a JSON
// 404/405 in the path's dialect.
//
// Responses API requests are relayed unchanged to OpenAI targets (their
// answers and events come back verbatim) and translated for every other
// target; previous_response_id and item_reference, which need state only
// OpenAI holds, go only to OpenAI targets (a 400 when the route has none).
//
// A request's "model" names a route, a "provider/model" target (run under
// the default route's policies) or a bare model for default_provider; the
// body's "fallbacks" or "models" list appends targets for that request. Any
// dialect reaches any provider: requests, responses and streams are
// translated, tool calls included, and a request whose target speaks its own
// dialect passes through without loss (fields the canonical form lacks ride
// in provider.Request.Extra and Part.Extra).
//
// Failures come back in the client's dialect; errors.go is the one place
// that maps engine outcomes to statuses and headers (429 with retry-after
// when every target is rate limited, 503 when all are down, the request's
// own 400/401/402/413 passed through, x-should-retry: false on terminal
// errors). Streams send nothing before the first token; a stream that breaks
// after tokens went out is continued by the engine on a later target (with
// the text so far as a prefill, or by a regeneration that repeats it; the
// gateway relays it, with an SSE comment naming both targets), or ended with
// an error event in the client's dialect.
//
// # Speed
//
// bench_test.go measures, in one process on loopback against one
// zero-latency mock, the same OpenAI chat completion sent directly, through
// a plain httputil.ReverseProxy (the floor any gateway pays) and through the
// gateway. BenchmarkGatewaySequential interleaves the three paths one call
// at a time and reports p50/p99 latency added over the direct call;
// BenchmarkGatewayConcurrent32 alternates batches of 32 concurrent clients
// and reports each path's median req/s; BenchmarkGatewayHeap shows the live
// heap before and after b.N requests; BenchmarkHandler and BenchmarkCodec
// isolate the gateway's own work. Decoding scans the body once (no
// reflection for messages and content blocks) into pooled buffers; answers
// and stream events are appended by hand.
//
//	go test -run '^$' -bench 'Gateway|Handler|Codec' -benchtime 5000x ./gateway/
//
// Example:
//
//	srv, err := gateway.New(&gateway.Options{Engine: eng, Catalog: cfg.Catalog()})
//	if err != nil { ... }
//	ln, _ := net.Listen("tcp", "127.0.0.1:8080")
//	err = srv.Run(ctx, ln, nil) // until ctx is done, then a graceful shutdown
package gateway
