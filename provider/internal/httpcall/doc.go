// Package httpcall is the HTTP call the provider adapters share: building
// and sending a request, turning every failure into a classified
// *provider.Error, reading success bodies and running an SSE stream under
// one end rule. It also holds the small request-encoding helpers every
// adapter uses (Drops, MergeExtra, MessageExtras).
//
//	call := httpcall.Call{Provider: "anthropic", Model: model}
//	resp, err := call.Do(ctx, client, req) // 2xx, or a *provider.Error
package httpcall
