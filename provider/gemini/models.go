package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/wire"
)

var _ provider.ModelLister = (*Adapter)(nil)

// Models implements provider.ModelLister: GET {BaseURL}/v1beta/models with
// the key in x-goog-api-key (never in the URL). The "models/" prefix is
// removed from each name. Failures are classified *provider.Error values,
// as from Chat.
func (a *Adapter) Models(ctx context.Context) ([]string, error) {
	call := wire.Call{Provider: a.name}
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/v1beta/models", nil)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	for k, v := range a.hdr {
		if k != "Content-Type" {
			hr.Header[k] = v
		}
	}
	resp, err := call.Do(ctx, a.client, hr)
	if err != nil {
		return nil, err
	}
	body, err := call.ReadBody(ctx, resp)
	if err != nil {
		return nil, err
	}
	var list struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.Unmarshal(body, &list); err != nil || list.Models == nil {
		if err == nil {
			err = errNotModelList
		}
		return nil, call.BadBody(resp, body, err)
	}
	out := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		out = append(out, strings.TrimPrefix(m.Name, "models/"))
	}
	return out, nil
}

var errNotModelList = fmt.Errorf("body is not a model list")
