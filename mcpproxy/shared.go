package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/llmguard/llmguard/internal/mcpcall"
	"github.com/llmguard/llmguard/state"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sharedStore keeps the proxy's results in its local cache and in a
// state.ResultStore that replicas share (Redis), with the claims of the
// calls in flight (mcpcall.Claims): a repeat that reaches another replica
// gets the first call's result within the TTL, and one that arrives while
// the first call still runs waits for it, instead of running the tool
// again. A result is read locally first; the shared store's errors make
// the call run unshared, as the Group treats every Store error. Safe for
// concurrent use.
type sharedStore struct {
	local   *mcpcall.Cache[*outcome]
	results state.ResultStore
}

// sharedKeyPrefix names the proxy's keys among the store's others.
const sharedKeyPrefix = "mcpproxy:"

// sharedOutcome is an outcome as the shared store holds it.
type sharedOutcome struct {
	Result  *mcp.CallToolResult `json:"result"`
	Args    string              `json:"args"`
	Expires time.Time           `json:"expires"`
}

// errForeign is a stored value the proxy did not write (another version):
// the call runs unshared.
var errForeign = errors.New("shared result not readable")

// decode reads a stored outcome, keeping it locally until it expires; ok
// false when it has expired.
func (s *sharedStore) decode(ctx context.Context, key string, raw []byte) (o *outcome, ok bool, err error) {
	var so sharedOutcome
	if err := json.Unmarshal(raw, &so); err != nil || so.Result == nil {
		return nil, false, errForeign
	}
	ttl := time.Until(so.Expires)
	if ttl <= 0 {
		return nil, false, nil
	}
	o = &outcome{res: so.Result, args: so.Args, keep: true}
	s.local.Set(ctx, key, o, ttl)
	return o, true, nil
}

func (s *sharedStore) Get(ctx context.Context, key string) (*outcome, bool, error) {
	if o, ok, _ := s.local.Get(ctx, key); ok {
		return o, true, nil
	}
	raw, _, err := s.results.Result(ctx, sharedKeyPrefix+key)
	if err != nil || raw == nil {
		return nil, false, err
	}
	o, ok, err := s.decode(ctx, key, raw)
	if errors.Is(err, errForeign) {
		return nil, false, nil // not one of ours: run the call
	}
	return o, ok, err
}

// Set keeps o and publishes it, ending the key's claim.
func (s *sharedStore) Set(ctx context.Context, key string, o *outcome, ttl time.Duration) error {
	s.local.Set(ctx, key, o, ttl)
	b, err := json.Marshal(sharedOutcome{Result: o.res, Args: o.args, Expires: time.Now().Add(ttl)})
	if err != nil {
		return err
	}
	return s.results.Publish(ctx, sharedKeyPrefix+key, b, ttl)
}

// Claim implements mcpcall.Claims.
func (s *sharedStore) Claim(ctx context.Context, key string, ttl time.Duration) (*outcome, bool, bool, error) {
	raw, claimed, err := s.results.Claim(ctx, sharedKeyPrefix+key, ttl)
	if err != nil || raw == nil {
		return nil, false, claimed, err
	}
	o, ok, err := s.decode(ctx, key, raw)
	if err == nil && !ok {
		// Expired as it was read: the store drops it; run unshared.
		err = errForeign
	}
	return o, ok, false, err
}

// Peek implements mcpcall.Claims.
func (s *sharedStore) Peek(ctx context.Context, key string) (*outcome, bool, bool, error) {
	raw, inFlight, err := s.results.Result(ctx, sharedKeyPrefix+key)
	if err != nil || raw == nil {
		return nil, false, inFlight, err
	}
	o, ok, err := s.decode(ctx, key, raw)
	return o, ok, inFlight, err
}

// Release implements mcpcall.Claims.
func (s *sharedStore) Release(ctx context.Context, key string) error {
	return s.results.Release(ctx, sharedKeyPrefix+key)
}
