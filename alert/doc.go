// Package alert sends Slack-compatible webhook alerts ({"text": "..."} POSTed
// as JSON) from the engine's events: when a provider key fails for a reason
// of its own (auth, quota or billing, permission), when it works again, and
// when a circuit breaker opens or closes. Each is sent once per state
// change, redacted, from a bounded queue that never blocks a request;
// delivery failures are logged with log/slog.
//
//	n, err := alert.New(&alert.Options{WebhookURL: cfg.Alerts.WebhookURL})
//	if err != nil { ... }
//	defer n.Close(ctx)
//	opts := cfg.EngineOptions()
//	opts.Adapters, opts.OnEvent = adapters, n.Event
//	eng, err := resilience.New(opts)
package alert
