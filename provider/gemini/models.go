package gemini

import (
	"context"
	"strings"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

var _ provider.ModelLister = (*Adapter)(nil)

// Models implements provider.ModelLister: GET {BaseURL}/v1beta/models with
// the key in x-goog-api-key (never in the URL). The "models/" prefix is
// removed from each name. Failures are classified *provider.Error values,
// as from Chat.
func (a *Adapter) Models(ctx context.Context) ([]string, error) {
	names, err := httpcall.Call{Provider: a.name}.ListModels(ctx, a.client, a.base+"/v1beta/models", a.hdr, "models", "name")
	for i, n := range names {
		names[i] = strings.TrimPrefix(n, "models/")
	}
	return names, err
}
