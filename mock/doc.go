// Package mock is llmguard's fault-injecting fake upstream: an http.Handler
// that speaks the Anthropic, OpenAI(-compatible), Azure OpenAI and Gemini
// APIs with realistic success bodies and streams, and answers with each
// provider's exact error bodies and headers when a scenario says so. It
// runs in-process under httptest and as `llmguard mock`.
//
//	srv := mock.New(&mock.Config{Scenario: sc}) // nil Config: healthy
//	ts := httptest.NewServer(srv)
//	defer ts.Close()
//	// point an adapter at ts.URL; count attempts with srv.Requests()
//
// # Endpoints
//
//	POST /v1/messages                                    Anthropic (request-id: req_011CMock…)
//	POST /v1/chat/completions, /chat/completions         OpenAI (x-request-id: req_<32 hex>)
//	POST /v1/responses, /{name}/v1/responses             OpenAI Responses API (object or typed event stream)
//	POST /{name}/chat/completions, /{name}/v1/…          OpenAI-compatible provider {name} (deepseek, groq, …)
//	POST /openai/deployments/{d}/chat/completions        Azure (x-request-id and apim-request-id)
//	POST /v1beta/models/{model}:generateContent          Gemini
//	POST /v1beta/models/{model}:streamGenerateContent    Gemini stream (SSE with ?alt=sse, else a JSON array)
//	GET  /v1/models (Anthropic when x-api-key or anthropic-version is sent, else OpenAI),
//	     /v1beta/models (Gemini), /openai/models (Azure)
//	GET  /_mock/requests   the request log as JSON (?provider=, ?model=, ?path= filter)
//	POST /_mock/reset      clear the log and every sequence (Server.Reset)
//	GET  /_mock/scenario   the scenario's name and description
//
// A request without an API key gets the provider's missing-key error unless
// Config.AllowNoKey is set. The answer echoes the requested model and is
// derived from the last user message: "Mock answer from MODEL: FIRST 8
// WORDS"; a prompt containing "summar" gets "Summary: …"; after a tool result,
// "Mock answer from MODEL: the tool returned: …".
//
// Tool calls: when the request declares tools and the last message is not a
// tool result, the mock answers with a call (Anthropic tool_use, OpenAI
// tool_calls, Gemini functionCall) if tool_choice forces one (a named tool,
// or any/required/ANY: the first tool) or if the last user message names a
// tool as a whole word (case-insensitive; text inside <system-reminder>
// blocks does not count). tool_choice none/NONE forbids it.
// The arguments fill the schema's required properties with placeholder
// values ("mock", 1, true, [], {}, or the first enum value).
//
// Streams: Anthropic sends message_start, content_block_start, ping,
// content_block_delta (one per word), content_block_stop, message_delta and
// message_stop; OpenAI sends chat.completion.chunk objects, a usage chunk when
// stream_options.include_usage is set, then [DONE]; Gemini sends chunks with
// usageMetadata, the last with finishReason STOP.
//
// # Faults
//
// A step is KIND[:ARG][@LATENCY]. KIND is an HTTP status (rendered as that
// provider's error for the status: 429 rate limit, 529/503 overloaded, 401
// bad key, 502 Cloudflare HTML, …; 200 is success) or a name:
//
//	ok                  success
//	overloaded          Anthropic 529 overloaded_error · OpenAI 503 · Gemini 503 UNAVAILABLE
//	rate_limit[:S]      429 with retry-after S (default 2); OpenAI rate_limit_exceeded + x-ratelimit-*;
//	                    Azure "Please retry after S seconds"; Gemini PerMinute QuotaFailure + RetryInfo
//	insufficient_quota  OpenAI 429 insufficient_quota · Anthropic 400 credit too low · Gemini 429 "limit: 0"
//	credit_low          Anthropic 400 "Your credit balance is too low…" · OpenAI insufficient_quota · Gemini 402
//	daily_quota         Gemini 429 PerDay QuotaFailure (RetryInfo 36s) · Anthropic 429
//	                    enforced_spend_limit_reached · Azure "retry after 86400 seconds" · OpenAI insufficient_quota
//	bad_key             Anthropic/OpenAI/Azure 401 · Gemini 400 API_KEY_INVALID
//	permission, not_found, invalid_request, context_overflow, too_large, server_error, timeout
//	html_502            Cloudflare HTML 502 page naming the provider's host
//	reset               the connection is closed with a TCP RST before any response
//	hang                no response until the client gives up (or Server.Close, or Config.HangLimit)
//	silent[:N]          no status line or headers for N seconds (default 15), then the connection
//	                    closes, as a proxy or load balancer in front of a silent upstream does
//	truncated[:N]       a 200 whose body stops half way (streams: after N deltas, default 2,
//	                    the connection drops without the closing events)
//	malformed[:N]       a stream sends one event whose data is invalid JSON after N deltas (default 2),
//	                    then the rest of the answer; a non-streaming request succeeds
//	midstream[:N]       a stream fails after N deltas (default 3) with the provider's in-stream error:
//	                    Anthropic event: error overloaded_error, OpenAI an error chunk, OpenRouter
//	                    (/openrouter/…) a chunk with finish_reason "error", Gemini an error object;
//	                    a non-streaming request gets a truncated body
//	stuck[:N]           a stream goes silent after N deltas (default 3) and stays open until the client
//	                    gives up (stream idle timeouts); a non-streaming body stops half way and hangs
//	stall[:N]           200 at once, then keep-alives every Config.KeepAlive (SSE ": keep-alive"
//	                    comments in streams, blank lines before a JSON body, as DeepSeek does under
//	                    load): N of them, then the answer; without N until the client gives up
//	long[:N]            an answer that takes N seconds to generate (default 40), as a real long
//	                    answer does: a non-streaming request gets it (headers included) after N s;
//	                    a stream sends its first delta at once and the rest spread over N s
//
// ARG after a status (e.g. "503:10") adds retry-after; @LATENCY ("200@300ms")
// waits before answering.
//
// # Choosing faults
//
// Per request, without a file: the X-Mock-Fault header ("529,529,200") or a
// model name with the "+fault=" marker ("claude-sonnet-4-5+fault=529,529,200",
// also in Gemini paths). Requests with the same spec to the same provider
// advance one sequence; its last step then repeats. These win over the
// scenario.
//
// Per scenario (Config.Scenario; ParseScenario reads YAML or JSON, see its
// doc for the format): rules matched by provider, model glob, endpoint and
// stream, each with a sequence, random faults with rates (seeded), and
// latency (fixed, uniform min/max or log-normal median/p99), optionally
// limited to a span of time (after, for, every). Built-in
// scenarios (Builtin, LoadScenario):
//
//	healthy             every request succeeds
//	overload-burst      each provider's first 3 generation requests get its overload error, then success
//	rate-limited        30% of requests get 429 with retry-after 2 (seeded)
//	quota-empty         every request gets the out-of-money error (insufficient_quota / credit too low / limit 0)
//	bad-key             every request, model listings included, gets the invalid-key error
//	flaky-network       10% resets, 10% HTML 502, 10% truncated bodies; latency median 20ms, p99 200ms
//	gemini-daily-quota  Gemini gets the per-day 429 QuotaFailure; other providers are healthy
//	midstream-error     every stream fails after 3 tokens; non-streaming requests succeed
//	outage              every request gets the provider's 500
//	brief-outage        healthy for 1s, then 500s for 3s, then healthy; repeats every 30s
//	mixed               Anthropic 15% 429 (retry-after 1) and 15% 529, OpenAI 10% resets and 10% HTML 502,
//	                    Gemini out of daily quota (seeded)
//	slow                every request succeeds after 1.5s
//
// Every request is logged (Config.Logger, keys masked to their last 4
// characters) and kept in an in-memory log: Server.Requests and
// GET /_mock/requests.
package mock
