// Package chaos is `llmguard bench chaos`: a scorecard of scenarios (an
// overload burst, a rate-limit storm with hints, empty credit, a bad key, a
// spent daily quota, a flaky network, a silent target, a slow first token,
// a mid-stream failure, a malformed event, an outage of the primary then
// recovery) by strategies (llmguard's engine; a naive client that retries
// every error with a fixed backoff; a client that never retries; the
// classic "retry 429 and 5xx with jitter" loop; that loop plus a fallback).
//
// Every strategy calls the same route, a primary whose trouble the scenario
// scripts and a healthy, dearer fallback on another provider, through
// llmguard's adapters over real HTTP to its own fresh copies of the mock on
// 127.0.0.1, with the same deadline, header timeout and attempts per
// target. Each request streams; its answer is full (whole and right), a
// clean error (nothing reached the caller) or truncated (text that is not
// the full answer). A meter between each strategy and its adapters times
// every attempt and prices it at list prices; the mocks' request logs
// count the attempts and say which answers could never have succeeded.
//
//	s, err := chaos.Run(ctx, &chaos.Options{Seed: 1, Progress: os.Stderr})
//	if err != nil { ... }
//	s.Markdown(os.Stdout)      // the table, findings and definitions
//	s.SVG(f)                   // the chart
//	for _, f := range s.Findings { log.Println(f.Scenario, f.Text) }
//
// The mocks' faults and every strategy's jitter are seeded; timings are
// real (the scenarios are scaled to seconds), so the latency columns move
// with the machine's load, which the scorecard states.
package chaos
