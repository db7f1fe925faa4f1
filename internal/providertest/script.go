package providertest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/llmguard/llmguard/provider"
)

// Script is a provider for the tests of what runs streams over adapters
// (the engine, the gateway): each Stream call answers with the next of
// Replies and records the request it was given.
type Script struct {
	// Provider is its Name; "p" when empty.
	Provider string
	// Replies are the answers in order, each a provider.Stream, an error,
	// or a func(context.Context) provider.Stream (given the call's context).
	Replies []any
	// Empty is the error once Replies have run out.
	Empty error

	mu   sync.Mutex
	reqs []*provider.Request
}

// Name is s.Provider, or "p".
func (s *Script) Name() string {
	if s.Provider == "" {
		return "p"
	}
	return s.Provider
}

// Chat is not scripted: it answers errors.ErrUnsupported.
func (s *Script) Chat(context.Context, *provider.Request) (*provider.Response, error) {
	return nil, errors.ErrUnsupported
}

// Stream records req and answers with the next reply.
func (s *Script) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	if len(s.Replies) == 0 {
		return nil, s.Empty
	}
	r := s.Replies[0]
	s.Replies = s.Replies[1:]
	switch r := r.(type) {
	case provider.Stream:
		return r, nil
	case error:
		return nil, r
	case func(context.Context) provider.Stream:
		return r(ctx), nil
	}
	panic(fmt.Sprintf("providertest.Script: reply %T is not a stream, an error or a func(context.Context) provider.Stream", r))
}

// Requests are the requests Stream was given, in order.
func (s *Script) Requests() []*provider.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs
}
