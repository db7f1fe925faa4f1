package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/llmguard/llmguard/provider"
	"github.com/llmguard/llmguard/provider/internal/wire"
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
	call := wire.Call{Provider: a.name}
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.name, err)
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
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || list.Data == nil {
		if err == nil {
			err = errNotModelList
		}
		return nil, call.BadBody(resp, body, err)
	}
	out := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		out = append(out, m.ID)
	}
	return out, nil
}

var errNotModelList = fmt.Errorf("body is not a model list")
