// Package redisstore is the state.Store and state.ItemStore that several
// llmguard replicas share through Redis or Valkey (standalone, Sentinel or
// Cluster), so that a breaker opened, a cooldown asked for by a provider or
// a key found to have no credit in one replica is honoured by all of them.
//
// A breaker record is one JSON string under
// "<prefix>v1:breaker:{<key>}": the braces are a Cluster hash tag, so a
// target's record lives in one slot. UpdateBreaker is optimistic: it takes
// the record this replica last read or wrote there as its guess, applies
// the caller's pure function and writes the result with a Lua
// compare-and-set script (EVALSHA, with EVAL when the server does not hold
// the script yet) that stores it only if the record is still the one
// guessed, and otherwise answers the current one for the next try: one
// round trip when the guess is right.
//
// The Store is a state.Pipelined: Breakers reads a call's records (its
// key's and its target's) in one round trip, and UpdateBreakerLater writes
// what the call need not wait for after it returns, the updates of a key
// asked meanwhile in one compare-and-set. A call on a healthy target then
// waits for one round trip to Redis, two when its target is paced by
// announced rate limits (see BenchmarkPerCall and TestRoundTripsPerCall). The script reads the server's clock (TIME) to set the
// record's expiry: every record expires IdleTTL after its last write, or
// IdleTTL after the end of its open or cooldown period when that is later,
// so nothing grows without bound and no replica's clock decides it.
//
// A target's concurrency leases are one sorted set under
// "<prefix>v1:lease:{<key>}", each lease scored by its expiry on the
// server's clock; the acquire and renew scripts drop the expired ones
// first, so a dead replica's leases free their slots at their TTL.
//
// Redis down or slow never fails a request: each call is bounded by
// Options.Timeout, and a call that fails or times out is served from a local
// in-memory store instead, as are the calls after it while Redis is away. The
// store logs the outage once, retries the connection with a capped
// exponential backoff, and shares again once Redis answers (Status says
// which, and how many calls were served locally).
//
//	st, err := redisstore.New(ctx, &redisstore.Options{URL: "redis://127.0.0.1:6379"})
//	if err != nil {
//		return err // a malformed URL; an unreachable server is not an error
//	}
//	defer st.Close()
//	opts := cfg.EngineOptions()
//	opts.Adapters, opts.Store = ads, st
package redisstore
