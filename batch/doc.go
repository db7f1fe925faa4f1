// Package batch runs a file of prompts through the engine and never loses
// or repeats work: llmguard batch, and the MCP tool batch_summarize.
//
// An [Input] is a JSON Lines file in one of three shapes, detected per file:
// llmguard's own ({"id", "text" | "prompt" | "messages"}), the OpenAI Batch
// API's input ({"custom_id", "method", "url", "body"}) or the Anthropic
// Message Batches request ({"custom_id", "params"}). A [Runner] sends each
// item through a [resilience.Engine] and appends its [Record] to the results
// file in the same shape, fsynced before the item counts as done, so a run
// that is killed resumes where it was: a re-run with the same results file
// skips what is there.
//
// Each failed call is judged once: the item's own fault (a request every
// target rejects) is recorded as failed; an outage (every target down,
// overloaded or rate limited) pauses the run until the wait the servers or
// the breakers give, then one item probes whether a target is back; a quota
// pauses until its reset (or stops past [Config.NoWaitPast]); a bad key or
// no credit stops the run with one line and leaves the rest to do.
//
//	in, err := batch.Open("items.jsonl")
//	if err != nil { ... }                  // unreadable, or duplicate ids
//	r, err := batch.New(eng, &batch.Config{Codec: gateway.Codec{}, Concurrency: 16})
//	sum, err := r.Run(ctx, in, "results.jsonl")
//	fmt.Println(sum.Served, sum.Failed, sum.Left(), sum.Stopped)
package batch
