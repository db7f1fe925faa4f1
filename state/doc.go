// Package state defines where llmguard keeps state that several processes may
// share: the circuit-breaker records (Store), and the items the gateway keeps
// of its Responses API answers for a later item_reference (ItemStore), the
// results and in-flight claims of deduplicated calls (ResultStore), and the
// leases on targets' concurrency slots (LeaseStore). memstore is the
// in-process backend of each (the default), and storetest is the
// conformance suite every backend runs.
//
// A Store only stores: the breaker transitions are pure functions in package
// resilience, applied inside Store.UpdateBreaker so that each update is atomic
// per key and no lock is held across an upstream call.
//
//	st := memstore.New()
//	b, err := st.UpdateBreaker(ctx, "target/openai/gpt-4.1", func(b *state.Breaker) bool {
//		b.WindowCalls++
//		return true
//	})
package state
