// Package wire holds the HTTP plumbing the provider adapters share: sending
// a request, turning every failure into a classified *provider.Error,
// reading success bodies and running an SSE stream under one end rule.
//
//	call := wire.Call{Provider: "anthropic", Model: model}
//	resp, err := call.Do(ctx, client, req) // 2xx, or a *provider.Error
package wire
