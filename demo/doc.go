// Package demo plays `llmguard demo`: a scripted bad night against the
// in-process mock (real HTTP on 127.0.0.1, no keys). The primary target
// has a 529 burst, then a rate-limit storm with retry-after, then calm
// (but some answers slow enough for llmguard to hedge them), then its key
// runs out of credit; the fallbacks have a per-day quota, a flaky network
// and a healthy but slower model. One request in StreamEvery is a stream,
// for every client. The same requests, at the
// same moments, go through llmguard's engine and real adapters, through a
// naive client (retry every error with a fixed backoff) and through a
// client that never retries, each against its own fresh copy of the
// scripted mock, and the summary says what each got. Attempts are counted
// both by the clients and by the mock's request log.
//
//	s, err := demo.Run(ctx, &demo.Options{Requests: 300, Progress: os.Stderr})
//	if err != nil { ... }
//	log.Println(s.Llmguard.Served, s.Naive.Served, s.NoRetry.Served)
//
// Waits are real: the night is short (25ms of arrivals per request), the
// servers' retry-after is 1s; no clock is scaled.
package demo
