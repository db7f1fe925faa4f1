package resilience

import (
	"io"
	"strings"

	"github.com/llmguard/llmguard/provider"
)

// The static fallback: when every target failed, a route's canned answer
// for the prompt, labelled (Result.Static, Target "static").

// static returns the route's labelled canned answer for the call, or nil.
func (cs *callState) static() *Result {
	m := cs.rp.static
	if len(m) == 0 {
		return nil
	}
	prompt := strings.ToLower(strings.TrimSpace(lastUserText(cs.c.Request)))
	answer, ok := m[prompt]
	if !ok {
		for k, v := range m {
			if strings.ToLower(strings.TrimSpace(k)) == prompt {
				answer, ok = v, true
				break
			}
		}
	}
	if !ok {
		answer, ok = m["*"]
	}
	if !ok {
		return nil
	}
	cs.emit(Event{Kind: EventSuccess, Target: "static", Reason: "static fallback", Err: cs.lastErr})
	attempts, fallbacks, waited := cs.counts()
	return &Result{
		Response: &provider.Response{Provider: "static", Model: "static", Text: answer, FinishReason: provider.FinishStop},
		Target:   "static", Static: true, Attempts: attempts, Fallbacks: fallbacks, Waited: waited,
		Wasted: cs.wastedUSD(),
	}
}

func lastUserText(req *provider.Request) string {
	if req == nil {
		return ""
	}
	req, err := req.Full() // a relayed request's conversation, decoded now
	if err != nil {
		return ""
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != provider.RoleUser {
			continue
		}
		var b strings.Builder
		for _, p := range m.Content {
			if p.Type == provider.PartText {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

// staticStream streams a static fallback answer as one chunk.
type staticStream struct {
	resp *provider.Response
	done bool
}

func newStaticStream(r *provider.Response) *staticStream { return &staticStream{resp: r} }

func (s *staticStream) Recv() (provider.Chunk, error) {
	if s.done {
		return provider.Chunk{}, io.EOF
	}
	s.done = true
	return provider.Chunk{Text: s.resp.Text, FinishReason: provider.FinishStop, Model: s.resp.Model}, nil
}

// Buffered implements provider.BufferReporter: the answer is in memory.
func (s *staticStream) Buffered() bool { return !s.done }

func (s *staticStream) Close() error      { s.done = true; return nil }
func (s *staticStream) RequestID() string { return "" }
