// Package telemetry shows from outside what llmguard does: Prometheus
// metrics fed by the engine's events (resilience.Options.OnEvent) and by
// the edges' request records (gateway.Options.Metrics,
// mcpserver.Config.Metrics), in a private registry served at /metrics.
//
// Names follow the OpenTelemetry GenAI conventions where they exist
// (gen_ai_client_operation_duration_seconds, gen_ai_client_token_usage,
// gen_ai_client_operation_time_to_first_chunk_seconds,
// gen_ai_client_operation_time_per_output_chunk_seconds, with the labels
// gen_ai_operation_name, gen_ai_provider_name, gen_ai_request_model,
// gen_ai_response_model, gen_ai_token_type and error_type), and llmguard_*
// for the rest. Cardinality is bounded: only the configured routes, targets
// and models become label values; any other name a client sends is
// "other". Failures carry the classifier's class (error_type) and a fault
// domain (fault_domain), a closed set: caller, policy, provider, network,
// gateway (see Domain).
//
//	m := telemetry.New(&telemetry.Options{Routes: eng.Routes(), Status: eng.Status})
//	opts.OnEvent = m.Event                // before resilience.New(opts)
//	http.Handle("/metrics", m.Handler())
package telemetry
