package anthropic

import (
	"context"
	"strings"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/httpcall"
)

var _ provider.ModelLister = (*Adapter)(nil)

// Models implements provider.ModelLister: GET {BaseURL}/v1/models with the
// adapter's key and version headers. Failures are classified *provider.Error
// values, as from Chat.
func (a *Adapter) Models(ctx context.Context) ([]string, error) {
	u := strings.TrimSuffix(a.url, "/messages") + "/models"
	return httpcall.Call{Provider: a.name}.ListModels(ctx, a.client, u, a.hdr, "data", "id")
}
