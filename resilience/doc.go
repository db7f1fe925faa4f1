// Package resilience is llmguard's engine: it runs one logical LLM call over
// a route of targets ("provider/model"), deciding every retry, wait, fallback
// and breaker transition from the classifier's verdict. It never touches HTTP
// or MCP types; the gateway and the MCP server adapt its events and errors.
//
// # Composition order
//
// Written once, here. For each call:
//
//  1. Idempotency: a call with an IdempotencyKey (or, on a route with a cache
//     TTL, the SHA-256 of its canonical request) is served from the result
//     cache while fresh; concurrent duplicates share one flight (singleflight).
//     Streams replay a stored answer as chunks and store their own once it
//     ended properly; concurrent duplicate streams each run. Held repeats
//     (repeat.go): a call with a RepeatScope identical to one that the engine
//     retried to exhaustion moments before gets that failure back (ErrRepeat)
//     with no upstream attempt, until the route's repeat_hold ends or a
//     target of the route answers any call.
//  2. Deadline: one deadline (Call.Timeout, else the route's timeout, default
//     60s) bounds everything below; for streams it bounds the time to the
//     first token (the first chunk with content: text, a tool call, thinking
//     or a finish reason; metadata-only chunks before it do not count), after
//     which the idle timeout and the caller's context rule.
//  3. Route walk, target by target in effective order (as listed, or by cost):
//     a. Fallback eligibility from the last failure: invalid_request never
//     falls back; after a context_length_exceeded, for the rest of the call,
//     never to a target whose catalogue window is no larger than one that
//     overflowed, and to one whose window is unknown only after those known
//     to be larger (window.go); content_filtered only when the route opts
//     in; otherwise Verdict.Fallback.
//     b. Breakers: the provider key's breaker, then the target's; an open
//     breaker or a rate-limit cooldown skips the target at zero cost (its
//     end counts towards RouteError.RetryAt); a half-open one admits at
//     least `probes` calls at once, more in proportion to the calls asking.
//     c. Pacing, then the concurrency limit. Pacing (pace.go): a turn of the
//     target's pacer, a token bucket set by the rate limits its answers
//     announce (x-ratelimit-*, anthropic-ratelimit-*), waiting at most
//     queue_timeout; a turn further away skips the target until then (the
//     walk falls back, or holds for it as for a cooldown). Then a slot of
//     the target's semaphore, waiting at most queue_timeout (both counted
//     against the deadline). The limit is per target, shared by every
//     route: the smallest non-zero max_concurrency any configured route
//     gives it. With Options.Leases it holds across the engines sharing the
//     store: a slot there is a lease, renewed while held, that expires when
//     its replica dies (lease.go).
//     d. Hedge (first attempt only, when hedge_after > 0): no answer in time
//     starts the next target the walk could fall back to (rules of step a,
//     breakers of step b) too, if max_total_attempts leaves room; first
//     success wins. A primary failure that forbids falling back to the
//     hedge's target cancels it; a target a hedge tried is not tried again.
//     e. Attempt, with per-attempt timeouts: header timeout, first-token
//     timeout, each shortened to the time left, then the idle timeout. Chat
//     asks the upstream for a stream too and assembles the answer, which
//     runs to the call's deadline (a plain Chat, under the header timeout,
//     for an adapter that cannot stream or a target whose streams broke;
//     under the first-token timeout plus its expected time for an answer
//     its max_tokens and the target's pace say is short, speed.go). Only the full configured
//     timeout is the target's
//     timeout; an attempt cut short by the caller's context or the call's
//     deadline ends the call with ErrDeadline and counts nothing (step f).
//     A streaming attempt that got no headers for longer than silent_after
//     and then lost its connection timed out (silent.go).
//     f. Outcome to the breaker by scope: model and provider (transport
//     failures) → the target's failure-rate window; key (auth, quota,
//     billing) → the key's breaker opens at once, for every target on the
//     key (quota until its reset); rate-limited → counted, not ill health,
//     and a cooldown for all callers only when most of the target's recent
//     calls were rate limited; request → nothing. See breaker.go.
//     g. Retry on the same target only for retryable verdicts other than
//     timeouts, within max_attempts, max_total_attempts and the retry budget
//     (asked when the attempt fails; a call in backoff holds no share),
//     after full-jitter exponential backoff never below the server's wait. A
//     wait above max_wait or beyond the deadline moves on at once.
//  4. Hold: when a pass over the targets ends with each spent and one of
//     them refused the call until a known moment (its breaker open or
//     half-open, a rate-limit cooldown; never a key's breaker) within the
//     deadline and its max_wait, the call waits for it, spread over half a
//     second, and walks the route again.
//  5. Static fallback: when every target failed, a route's canned answer,
//     labelled Result.Static and Target "static".
//  6. Continuation (streams): a stream that breaks after its first token,
//     having sent text only, continues on a later target of the route,
//     walked alone under the route's policies: with the text so far as an
//     assistant prefill where the catalogue says the target accepts one;
//     elsewhere, and on a target that answered a prefill with a 400 (then
//     remembered), the answer is regenerated and goes on only if it repeats
//     that text exactly (EventContinue; continue.go).
//     Chat, whose caller has seen nothing yet, asks for the answer whole
//     instead (step 3e, chat.go).
//
// Every step emits an Event (Options.OnEvent, then Call.OnEvent).
//
// # Policies
//
// Route, Target, Retry, Timeouts, Breaker and Cache are plain structs whose
// zero fields mean the documented defaults (DefaultRoute lists them); New
// applies them once. A field where zero is itself a setting is a pointer:
// nil is the default, new(0) or new(0.0) an explicit zero. config decodes
// llmguard.yaml into these types (config.Config.EngineOptions).
//
//	eng, err := resilience.New(&resilience.Options{
//		Routes: map[string]resilience.Route{"default": {Targets: []resilience.Target{
//			{Name: "anthropic/claude-sonnet-4-5"}, {Name: "openai/gpt-4.1"}}}},
//		Adapters: adapters, // "anthropic", "openai": provider.Adapter
//	})
//	if err != nil { ... }
//	res, err := eng.Chat(ctx, &resilience.Call{Route: "default", Request: req})
//	var re *resilience.RouteError
//	if errors.As(err, &re) && re.AllRateLimited() { retryAfter := re.RetryAt }
package resilience
