package mcpproxy

import (
	"context"
	"encoding/json"
	"time"

	"github.com/llmguard/llmguard/internal/mcpcall"
	"github.com/llmguard/llmguard/state"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sharedStore keeps the proxy's results in its local cache and in a
// state.ItemStore that replicas share (Redis): a repeat that reaches
// another replica within the TTL gets the first call's result instead of
// running the tool again. A result is read locally first; the shared
// store's errors count as "not stored" (the call runs), as the Group
// treats every Store error. Safe for concurrent use.
type sharedStore struct {
	local  *mcpcall.Cache[*outcome]
	shared state.ItemStore
}

// sharedKeyPrefix names the proxy's items among the store's others.
const sharedKeyPrefix = "mcpproxy:"

// sharedOutcome is an outcome as the shared store holds it.
type sharedOutcome struct {
	Result  *mcp.CallToolResult `json:"result"`
	Args    string              `json:"args"`
	Expires time.Time           `json:"expires"`
}

func (s *sharedStore) Get(ctx context.Context, key string) (*outcome, bool, error) {
	if o, ok, _ := s.local.Get(ctx, key); ok {
		return o, true, nil
	}
	vals, err := s.shared.GetItems(ctx, []string{sharedKeyPrefix + key})
	if err != nil || len(vals) != 1 || vals[0] == nil {
		return nil, false, err
	}
	var so sharedOutcome
	if err := json.Unmarshal(vals[0], &so); err != nil || so.Result == nil {
		return nil, false, nil // not one of ours, or from another version: run the call
	}
	ttl := time.Until(so.Expires)
	if ttl <= 0 {
		return nil, false, nil
	}
	o := &outcome{res: so.Result, args: so.Args, keep: true}
	s.local.Set(ctx, key, o, ttl)
	return o, true, nil
}

func (s *sharedStore) Set(ctx context.Context, key string, o *outcome, ttl time.Duration) error {
	s.local.Set(ctx, key, o, ttl)
	b, err := json.Marshal(sharedOutcome{Result: o.res, Args: o.args, Expires: time.Now().Add(ttl)})
	if err != nil {
		return err
	}
	return s.shared.PutItems(ctx, []state.Item{{Key: sharedKeyPrefix + key, Value: b}})
}
