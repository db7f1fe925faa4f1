package openai

import (
	"context"
	"net/url"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

var _ provider.ModelLister = (*Adapter)(nil)

// Models implements provider.ModelLister: GET {BaseURL}/models (Azure:
// {BaseURL}/openai/models?api-version=...) with the adapter's auth header.
// Failures are classified *provider.Error values, as from Chat.
func (a *Adapter) Models(ctx context.Context) ([]string, error) {
	u := a.base + "/models"
	if a.azure {
		u = a.base + "/openai/models?api-version=" + url.QueryEscape(a.apiVersion)
	}
	return httpcall.Call{Provider: a.name}.ListModels(ctx, a.client, u, a.hdr, "data", "id")
}
